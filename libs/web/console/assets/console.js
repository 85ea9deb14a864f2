// The Integrations section's one script. Every page works without it; it only enhances:
// times in the reader's time zone (UTC kept in the title), copy buttons, and a confirmation
// before any form marked data-confirm.
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

  function start() {
    localTimes();
    copyButtons();
    confirmations();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
