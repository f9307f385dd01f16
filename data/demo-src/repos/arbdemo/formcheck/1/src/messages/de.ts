export const de: Record<string, string> = {
  required: 'Dieses Feld ist erforderlich.',
  email: 'Bitte eine gültige E-Mail-Adresse eingeben.',
  too_short: 'Zu kurz.',
  too_long: 'Zu lang.',
  not_a_number: 'Bitte eine Zahl eingeben.',
  below_range: 'Zu klein.',
  above_range: 'Zu groß.',
  pattern: 'Ungültiges Format.',
};
