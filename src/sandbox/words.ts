/** Word lists the demo data is drawn from. */

export const FIRST_NAMES = [
  'Ava',
  'Noah',
  'Mia',
  'Liam',
  'Zoë',
  'Mateo',
  'Sofía',
  'Lucas',
  'Emma',
  'Yuki',
  'Amara',
  'Olivier',
  'Priya',
  'Kwame',
  'Lena',
  'Jonas',
  'Aiko',
  'Diego',
  'Fatima',
  'Henrik',
  'Chloé',
  'Ravi',
  'Ingrid',
  'Tomás',
  'Mei',
  'Oskar',
  'Nadia',
  'Bram',
  'Elif',
  'Sven',
];

export const LAST_NAMES = [
  'Jansen',
  'Okafor',
  'García',
  'Nakamura',
  'Müller',
  'Smith',
  'de Vries',
  'Kowalski',
  'Haddad',
  'Nguyen',
  'Rossi',
  'Larsen',
  'Patel',
  'Silva',
  'Dubois',
  "O'Brien",
  'Kim',
  'Novak',
  'Andersson',
  'Mensah',
  'Bakker',
  'Costa',
  'Ivanova',
  'Tanaka',
  'Schmidt',
];

export const TIMEZONES = [
  'Europe/Amsterdam',
  'Europe/London',
  'Europe/Berlin',
  'America/New_York',
  'America/Los_Angeles',
  'America/Sao_Paulo',
  'Asia/Tokyo',
  'Asia/Kolkata',
  'Australia/Sydney',
  'UTC',
];

export const CITIES = ['Amsterdam', 'Lagos', 'Madrid', 'Osaka', 'Berlin', 'Austin', 'Utrecht', 'Kraków', 'Beirut', 'Hanoi', 'São Paulo'];

export const TAG_TOPICS = [
  'billing',
  'refund',
  'delivery',
  'login',
  'app',
  'complaint',
  'praise',
  'outage',
  'order',
  'invoice',
  'warranty',
  'shipping',
  'account',
  'privacy',
  'fraud',
  'loyalty',
  'store',
  'returns',
  'pricing',
  'feature',
];
export const TAG_QUALIFIERS = ['request', 'issue', 'urgent', 'follow-up', 'question', 'feedback', 'escalated', 'vip', 'bug', 'info'];

export const TEAM_NAMES = [
  'Frontline',
  'Escalations',
  'Night Owls',
  'Billing Desk',
  'Social Squad',
  'VIP Care',
  'Returns',
  'Tech Support',
  'Weekend Crew',
  'Onboarding',
  'Quality',
  'Outreach',
];

export const QUEUE_TOPICS = ['General', 'Billing', 'Delivery', 'Technical', 'Complaints', 'Sales', 'Returns', 'Priority', 'Spanish', 'Dutch'];

export const CROWDS = ['Tier 1', 'Tier 2', 'Night shift', 'Social squad'];

export const INBOUND_TEXTS = [
  'My order #{n} has not arrived yet, can you check?',
  'Can someone help me reset my password?',
  'Great service today, thanks! 👍',
  'The app keeps crashing when I open it.',
  'Where is your nearest store?',
  'I was charged twice for order #{n}.',
  'Très bien, merci pour votre aide !',
  'Is there an outage right now? Nothing loads.',
  'Hoe kan ik mijn abonnement opzeggen?',
  'Still waiting for a refund after {n} days…',
];

export const REPLY_TEXTS = [
  'Sorry to hear that! Could you send us your order number in a private message?',
  'Thanks for reaching out, we are looking into it.',
  'Glad we could help, have a great day!',
  'We have forwarded this to our technical team.',
  'Could you tell us which version of the app you use?',
];

export const NOTE_TEXTS = ['Customer called twice.', 'Waiting for the warehouse.', 'Refund approved by finance.', 'Possible duplicate.'];
export const ACTION_TYPES = ['status_change', 'assign', 'tag', 'reply'];

export const ANNOTATION_TYPE_NAMES = [
  'Sentiment override',
  'Escalation note',
  'Root cause',
  'Product area',
  'Follow-up date',
  'Language',
  'Customer tier',
  'Compensation',
  'Legal hold',
  'Survey result',
  'Handover',
  'Duplicate of',
  'Campaign',
  'Region',
  'Summary',
];

export const FAILURE_MESSAGES = [
  "Generation failed in phase 'aggregate': source data unavailable",
  "Generation failed in phase 'export': row limit exceeded",
  "Generation failed in phase 'collect': channel credentials expired",
];

export function fillNumber(template: string, n: number): string {
  return template.replace('{n}', String(n));
}
