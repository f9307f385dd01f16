export const en: Record<string, string> = {
  required: 'This field is required.',
  email: 'Enter a valid e-mail address.',
  length: 'Enter text.',
  too_short: 'Too short.',
  too_long: 'Too long.',
  not_a_number: 'Enter a number.',
  below_range: 'Too small.',
  above_range: 'Too large.',
  pattern: 'Invalid format.',
  one_of: 'Choose one of the options.',
};
