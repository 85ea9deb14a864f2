/**
 * What `demo seed` puts into an organisation: a small council-and-clinic interpreting service.
 * Every turn carries a real translation into the conversation's other language.
 */

export type DemoGroupKey = 'managers' | 'interpreters' | 'caseWorkers' | 'integrations';

export interface DemoGroup {
  key: DemoGroupKey;
  name: string;
  permissions: string[];
}

export interface DemoPerson {
  name: string;
  jobTitle: string;
  /** The address's local part; the domain is made per organisation (addresses are platform-wide). */
  local: string;
  group: DemoGroupKey;
}

export interface DemoCase {
  ref: string;
  title: string;
  /** Closed after its conversations are in. */
  closed?: boolean;
}

export interface DemoTurn {
  speaker: string;
  language: string;
  text: string;
  translation: string;
}

const turn = (speaker: string, language: string, text: string, translation: string): DemoTurn => ({ speaker, language, text, translation });

export interface DemoConversation {
  caseRef: string;
  languages: [string, string];
  turns: DemoTurn[];
  facts: Array<[label: string, value: string]>;
  ended: boolean;
  summary?: string;
}

export const DEMO_GROUPS: DemoGroup[] = [
  { key: 'managers', name: 'People managers', permissions: ['people.manage'] },
  { key: 'interpreters', name: 'Interpreters', permissions: ['conversations.start'] },
  { key: 'caseWorkers', name: 'Case workers', permissions: ['cases.read_all', 'documents.send'] },
  { key: 'integrations', name: 'Integration managers', permissions: ['integrations.manage', 'organisation.own'] },
];

export const DEMO_PEOPLE: DemoPerson[] = [
  { name: 'Helen Carter', jobTitle: 'Service manager', local: 'helen.carter', group: 'managers' },
  { name: 'Priya Raman', jobTitle: 'Interpreting team lead', local: 'priya.raman', group: 'managers' },
  { name: 'Lucía Fernández', jobTitle: 'Spanish interpreter', local: 'lucia.fernandez', group: 'interpreters' },
  { name: 'Marek Kowalski', jobTitle: 'Polish interpreter', local: 'marek.kowalski', group: 'interpreters' },
  { name: 'Yusuf Haddad', jobTitle: 'Arabic interpreter', local: 'yusuf.haddad', group: 'interpreters' },
  { name: 'Claire Dubois', jobTitle: 'French interpreter', local: 'claire.dubois', group: 'interpreters' },
  { name: 'James Okafor', jobTitle: 'Housing officer', local: 'james.okafor', group: 'caseWorkers' },
  { name: 'Sarah Mitchell', jobTitle: 'Practice nurse', local: 'sarah.mitchell', group: 'caseWorkers' },
  { name: 'Tomás Becker', jobTitle: 'Integrations lead', local: 'tomas.becker', group: 'integrations' },
];

/** The demo person `npm run dev` prints a console sign-in link for (Integration managers: integrations.manage and organisation.own). */
export const DEMO_CONSOLE_PERSON = 'tomas.becker';

export const DEMO_CASES: DemoCase[] = [
  { ref: 'CRM-1042', title: 'Housing repair: damp and mould in a rented flat' },
  { ref: 'CRM-1043', title: 'GP follow-up after hospital discharge', closed: true },
  { ref: 'CRM-1051', title: 'Council tax reduction application' },
  { ref: 'CRM-1058', title: 'School places for two children' },
  { ref: 'CRM-1060', title: 'Eviction notice: homelessness prevention' },
];

export const DEMO_CONVERSATIONS: DemoConversation[] = [
  {
    caseRef: 'CRM-1043',
    languages: ['en', 'es'],
    turns: [
      turn(
        'Practice nurse',
        'en',
        "Good morning, Mrs Torres. I'm Sarah, the practice nurse. How have you been feeling since you left hospital?",
        'Buenos días, señora Torres. Soy Sarah, la enfermera del centro de salud. ¿Cómo se ha sentido desde que salió del hospital?',
      ),
      turn(
        'Patient',
        'es',
        'Mejor, gracias, pero todavía me canso mucho cuando subo las escaleras.',
        'Better, thank you, but I still get very tired when I climb the stairs.',
      ),
      turn(
        'Practice nurse',
        'en',
        'That is normal for the first few weeks. Are you taking the tablets the hospital gave you?',
        'Es normal durante las primeras semanas. ¿Está tomando las pastillas que le dieron en el hospital?',
      ),
      turn(
        'Patient',
        'es',
        'Sí, una por la mañana y otra por la noche. Pero solo me quedan cinco.',
        'Yes, one in the morning and one at night. But I only have five left.',
      ),
      turn(
        'Practice nurse',
        'en',
        'I will ask the doctor to send a new prescription to your pharmacy today. Which pharmacy do you use?',
        'Le pediré al médico que envíe hoy una receta nueva a su farmacia. ¿Qué farmacia usa?',
      ),
      turn('Patient', 'es', 'La farmacia de Hill Street, al lado del supermercado.', 'The pharmacy on Hill Street, next to the supermarket.'),
      turn(
        'Practice nurse',
        'en',
        "Perfect. I'll check your blood pressure now, and we will book a review with the doctor in two weeks.",
        'Perfecto. Ahora le tomaré la tensión y le daremos cita con el médico para una revisión dentro de dos semanas.',
      ),
    ],
    facts: [
      ['Pharmacy', 'Hill Street Pharmacy'],
      ['Medication left', '5 tablets (one morning, one night)'],
      ['Follow-up', 'GP review in two weeks'],
    ],
    ended: true,
    summary:
      'Mrs Torres saw the practice nurse after her discharge from hospital. She feels better but still tires on stairs. ' +
      'She takes her tablets twice a day and has five left; a repeat prescription goes to Hill Street Pharmacy today. ' +
      'Blood pressure checked; a GP review is to be booked in two weeks.',
  },
  {
    caseRef: 'CRM-1043',
    languages: ['en', 'es'],
    turns: [
      turn(
        'Receptionist',
        'en',
        'Hello, this is Riverside Surgery. Am I speaking to Ana Torres?',
        'Hola, le llamamos del centro de salud Riverside. ¿Hablo con Ana Torres?',
      ),
      turn('Patient', 'es', 'Sí, soy yo. ¿Ya está lista mi receta?', 'Yes, speaking. Is my prescription ready yet?'),
      turn(
        'Receptionist',
        'en',
        'Yes, the pharmacy has it and you can collect it this afternoon.',
        'Sí, la farmacia ya la tiene y puede recogerla esta tarde.',
      ),
      turn(
        'Receptionist',
        'en',
        'We also have an appointment with Dr Patel on Tuesday the 14th at 10:30. Does that suit you?',
        'También tenemos una cita con el doctor Patel el martes 14 a las 10:30. ¿Le viene bien?',
      ),
      turn(
        'Patient',
        'es',
        'Los martes por la mañana trabajo. ¿Tienen algo por la tarde?',
        'I work on Tuesday mornings. Do you have anything in the afternoon?',
      ),
      turn('Receptionist', 'en', 'There is a slot at 4:15 pm on the same day.', 'Hay un hueco a las 16:15 el mismo día.'),
      turn('Patient', 'es', 'Perfecto, esa hora me va bien. Muchas gracias.', 'Perfect, that time works for me. Thank you very much.'),
    ],
    facts: [
      ['Appointment', 'Tuesday 14th, 16:15, Dr Patel'],
      ['Prescription', 'Ready to collect this afternoon'],
    ],
    ended: true,
    summary:
      "The surgery confirmed that Ms Torres's repeat prescription is ready to collect. Her GP review is booked with " +
      'Dr Patel on Tuesday the 14th at 16:15, as she works in the mornings.',
  },
  {
    caseRef: 'CRM-1042',
    languages: ['en', 'pl'],
    turns: [
      turn(
        'Housing officer',
        'en',
        'Thank you for calling the housing team. I understand you have reported damp in your flat?',
        'Dziękuję za telefon do działu mieszkaniowego. Rozumiem, że zgłosił pan wilgoć w mieszkaniu?',
      ),
      turn(
        'Tenant',
        'pl',
        'Tak. W pokoju dziecka na ścianie jest czarna pleśń i ciągle wraca.',
        "Yes. There is black mould on the wall in my child's room and it keeps coming back.",
      ),
      turn('Housing officer', 'en', 'How long has this been a problem?', 'Od jak dawna jest ten problem?'),
      turn(
        'Tenant',
        'pl',
        'Od października. Myję ścianę co tydzień, ale to nic nie pomaga.',
        "Since October. I wash the wall every week, but it doesn't help at all.",
      ),
      turn(
        'Housing officer',
        'en',
        'Does anyone in the household have asthma or breathing problems?',
        'Czy ktoś z domowników ma astmę albo problemy z oddychaniem?',
      ),
      turn('Tenant', 'pl', 'Mój syn ma astmę. Ma sześć lat.', 'My son has asthma. He is six years old.'),
      turn(
        'Housing officer',
        'en',
        "Because of your son's asthma, I am marking this repair as urgent. A surveyor will visit within five working days.",
        'Ze względu na astmę syna oznaczam tę naprawę jako pilną. Rzeczoznawca przyjdzie w ciągu pięciu dni roboczych.',
      ),
      turn('Tenant', 'pl', 'Dziękuję. Najlepiej po piętnastej, wtedy jestem w domu.', 'Thank you. After 3 pm is best, I am at home then.'),
    ],
    facts: [
      ['Problem', "Black mould in the child's room since October"],
      ['Vulnerability', 'Son, aged 6, has asthma'],
      ['Priority', 'Urgent: surveyor visit within 5 working days, after 3 pm'],
    ],
    ended: true,
    summary:
      "The tenant reported black mould that keeps returning in his son's room since October. His six-year-old son has " +
      'asthma, so the repair was marked urgent; a surveyor will visit within five working days, preferably after 3 pm.',
  },
  {
    caseRef: 'CRM-1051',
    languages: ['en', 'ar'],
    turns: [
      turn(
        'Benefits adviser',
        'en',
        "Hello, I'm here to help you with your council tax reduction application.",
        'مرحباً، أنا هنا لمساعدتك في طلب تخفيض ضريبة المجلس المحلي.',
      ),
      turn(
        'Resident',
        'ar',
        'شكراً. فقدت عملي الشهر الماضي ولا أستطيع دفع الفاتورة كاملة.',
        'Thank you. I lost my job last month and I cannot pay the full bill.',
      ),
      turn('Benefits adviser', 'en', "I'm sorry to hear that. Do you live alone, or with your family?", 'يؤسفني سماع ذلك. هل تعيش وحدك أم مع عائلتك؟'),
      turn('Resident', 'ar', 'أعيش مع زوجتي وأطفالي الثلاثة.', 'I live with my wife and my three children.'),
      turn('Benefits adviser', 'en', 'Are you receiving Universal Credit at the moment?', 'هل تحصل حالياً على الائتمان الشامل (Universal Credit)؟'),
      turn('Resident', 'ar', 'قدّمت الطلب قبل أسبوعين وما زلت أنتظر الرد.', 'I applied two weeks ago and I am still waiting for an answer.'),
      turn(
        'Benefits adviser',
        'en',
        'That is fine. I will send your application today, backdated to the day you lost your job. Please bring your bank statements next week.',
        'لا بأس. سأرسل طلبك اليوم بأثر رجعي من اليوم الذي فقدت فيه عملك. أرجو أن تحضر كشوف حسابك المصرفي الأسبوع القادم.',
      ),
    ],
    facts: [
      ['Household', '2 adults, 3 children'],
      ['Income', 'Lost his job last month; Universal Credit claim pending'],
      ['Documents needed', 'Bank statements, next week'],
    ],
    ended: true,
    summary:
      'The resident lost his job last month and cannot pay his full council tax bill. He lives with his wife and three ' +
      'children and applied for Universal Credit two weeks ago. The adviser is sending a backdated reduction application ' +
      'today; the resident will bring bank statements next week.',
  },
  {
    caseRef: 'CRM-1058',
    languages: ['fr', 'en'],
    turns: [
      turn(
        'Admissions officer',
        'en',
        "Good afternoon. You'd like school places for two children, is that right?",
        "Bonjour. Vous souhaitez des places à l'école pour deux enfants, c'est bien cela ?",
      ),
      turn(
        'Parent',
        'fr',
        'Oui, ma fille a huit ans et mon fils a onze ans. Nous sommes arrivés à Leeds il y a trois semaines.',
        'Yes, my daughter is eight and my son is eleven. We arrived in Leeds three weeks ago.',
      ),
      turn(
        'Admissions officer',
        'en',
        'Thank you. Your daughter would go into Year 4 and your son into Year 7, which is secondary school.',
        "Merci. Votre fille entrerait en Year 4 et votre fils en Year 7, c'est-à-dire à l'école secondaire.",
      ),
      turn('Parent', 'fr', "Est-ce qu'ils peuvent aller dans la même école ?", 'Can they go to the same school?'),
      turn(
        'Admissions officer',
        'en',
        'Not the same building, but there is a primary school and a secondary school on the same road near you.',
        'Pas dans le même bâtiment, mais il y a une école primaire et une école secondaire dans la même rue, près de chez vous.',
      ),
      turn(
        'Parent',
        'fr',
        'Très bien. Mon fils parle un peu anglais, mais ma fille ne le parle pas du tout.',
        "Very good. My son speaks a little English, but my daughter doesn't speak it at all.",
      ),
    ],
    facts: [
      ['Children', 'Daughter, 8 (Year 4); son, 11 (Year 7)'],
      ['Language support', 'Daughter needs English as an additional language support'],
    ],
    ended: false,
  },
  {
    caseRef: 'CRM-1060',
    languages: ['en', 'pl'],
    turns: [
      turn(
        'Housing adviser',
        'en',
        'You told us your landlord has asked you to leave. When do you have to move out?',
        'Powiedziała pani, że właściciel kazał pani się wyprowadzić. Kiedy musi się pani wyprowadzić?',
      ),
      turn('Applicant', 'pl', 'Do końca miesiąca. Dostałam pisemne wypowiedzenie.', 'By the end of the month. I received a written notice.'),
      turn(
        'Housing adviser',
        'en',
        'Can you show us the notice? We need to check that it is valid.',
        'Czy może nam pani pokazać to wypowiedzenie? Musimy sprawdzić, czy jest ważne.',
      ),
      turn('Applicant', 'pl', 'Tak, mam je w torebce. Proszę.', 'Yes, I have it in my handbag. Here it is.'),
      turn(
        'Housing adviser',
        'en',
        'Thank you. This notice gives you two months, so you can stay until the 30th of April, not just the end of this month.',
        'Dziękuję. To wypowiedzenie daje pani dwa miesiące, więc może pani zostać do 30 kwietnia, a nie tylko do końca tego miesiąca.',
      ),
      turn('Applicant', 'pl', 'To dobra wiadomość. Co mam teraz zrobić?', 'That is good news. What should I do now?'),
      turn(
        'Housing adviser',
        'en',
        'We will open a homelessness prevention plan and help you find a new tenancy. I will call you next Monday.',
        'Otworzymy plan zapobiegania bezdomności i pomożemy pani znaleźć nowe mieszkanie na wynajem. Zadzwonię do pani w przyszły poniedziałek.',
      ),
    ],
    facts: [
      ['Notice', 'Written two-month notice, valid, ends 30 April'],
      ['Next step', 'Prevention plan opened; adviser calls next Monday'],
    ],
    ended: true,
    summary:
      "The applicant's landlord served a written notice. The adviser checked it: it gives two months, so she can stay " +
      'until 30 April. A homelessness prevention plan was opened to help her find a new tenancy; the adviser will call next Monday.',
  },
];
