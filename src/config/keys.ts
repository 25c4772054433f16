/** The settings a profile, a flag or the environment can give, and their environment variables. */
export const SETTING_KEYS = ['base-url', 'user', 'password', 'output', 'api-version', 'annotations-url', 'parallel'] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

export const ENVIRONMENT: Record<SettingKey, string> = {
  'base-url': 'CARECTL_BASE_URL',
  user: 'CARECTL_USER',
  password: 'CARECTL_PASSWORD',
  output: 'CARECTL_OUTPUT',
  'api-version': 'CARECTL_API_VERSION',
  'annotations-url': 'CARECTL_ANNOTATIONS_URL',
  parallel: 'CARECTL_PARALLEL',
};

export type ProfileValues = Partial<Record<SettingKey, string>>;

/** What `config set|get|unset` accept; the password is managed by login and logout only. */
export const CONFIG_KEYS = ['base-url', 'user', 'output', 'api-version', 'annotations-url', 'parallel'] as const satisfies readonly SettingKey[];
