// The Integrations section's one script. Every page works without it; it only enhances:
// times in the reader's time zone (UTC kept in the title), copy buttons, a confirmation before
// any form marked data-confirm, and the focus on what went wrong when a form was refused.
'use strict';
(function () {
  function localTimes() {
    var fmt;
    try {
      fmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
    } catch (e) {
      return;
    }
    document.querySelectorAll('time[datetime]').forEach(function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (isNaN(d.getTime())) return;
      if (!el.title) el.title = el.textContent;
      el.textContent = fmt.format(d);
    });
  }

  function copyButtons() {
    document.querySelectorAll('[data-copy]').forEach(function (button) {
      var source = document.getElementById(button.getAttribute('data-copy'));
      if (!source || !navigator.clipboard) return;
      var status = document.createElement('span');
      status.className = 'copy-status';
      status.setAttribute('role', 'status');
      button.insertAdjacentElement('afterend', status);
      button.hidden = false;
      button.addEventListener('click', function () {
        navigator.clipboard.writeText(source.textContent.trim()).then(
          function () {
            status.textContent = 'Copied';
          },
          function () {
            status.textContent = 'Could not copy: select the text and copy it yourself';
          },
        );
      });
    });
  }

  function confirmations() {
    document.querySelectorAll('form[data-confirm]').forEach(function (form) {
      form.addEventListener('submit', function (event) {
        if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
      });
    });
  }

  // The control a message next to a field is tied to (aria-describedby), and the one to focus:
  // a fieldset's first checkbox that can be ticked; null when it cannot take the focus.
  function controlFor(message) {
    var tied = document.querySelector('[aria-describedby~="' + message.id + '"]');
    if (tied && tied.tagName === 'FIELDSET') tied = tied.querySelector('input:not([disabled]), select:not([disabled])');
    return tied && !tied.disabled ? tied : null;
  }

  // A page that answers a refused form carries its messages next to the fields (p.error[id]).
  // This puts a summary of them at the top of the page, each a link to its field, and moves the
  // focus to it, so that a screen reader reads what went wrong and a keyboard is one Tab away from
  // the field. A refusal that is not about a field (data-refusal) takes the focus itself.
  function focusRefusal() {
    var main = document.getElementById('main');
    if (!main) return;
    var messages = main.querySelectorAll('p.error[id]');
    if (messages.length === 0) {
      var refusal = main.querySelector('[data-refusal]');
      if (refusal) {
        if (!refusal.hasAttribute('tabindex')) refusal.setAttribute('tabindex', '-1');
        refusal.focus();
      }
      return;
    }
    var summary = document.createElement('div');
    summary.className = 'error-summary';
    summary.id = 'error-summary';
    summary.setAttribute('tabindex', '-1');
    var alert = document.createElement('div');
    alert.setAttribute('role', 'alert');
    var title = document.createElement('h2');
    title.textContent = 'There is a problem';
    var list = document.createElement('ul');
    messages.forEach(function (message) {
      var control = controlFor(message);
      var link = document.createElement('a');
      link.href = '#' + (control && control.id ? control.id : message.id);
      // The message without its visually hidden "Error:" prefix.
      var text = message.cloneNode(true);
      text.querySelectorAll('.visually-hidden').forEach(function (el) {
        el.remove();
      });
      link.textContent = text.textContent.trim();
      link.addEventListener('click', function (event) {
        event.preventDefault();
        var target = control || message;
        if (!control) target.setAttribute('tabindex', '-1');
        var label = control && control.id ? document.querySelector('label[for="' + control.id + '"]') : null;
        (label || target).scrollIntoView({ block: 'center' });
        target.focus({ preventScroll: true });
      });
      var item = document.createElement('li');
      item.appendChild(link);
      list.appendChild(item);
    });
    alert.appendChild(title);
    alert.appendChild(list);
    summary.appendChild(alert);
    var heading = main.querySelector('h1');
    if (heading) heading.insertAdjacentElement('afterend', summary);
    else main.insertBefore(summary, main.firstChild);
    summary.focus();
  }

  function start() {
    localTimes();
    copyButtons();
    confirmations();
    focusRefusal();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
