// Where the authorization server's endpoints and pages live (SPEC 4.2): read by the provider's
// configuration, the routes that hand requests to it, and the pages whose forms post back.
export const OAUTH2_PATH = '/api/auth/oauth2';
export const INTERACTION_PATH = `${OAUTH2_PATH}/interaction`;

/** Where each endpoint lives (SPEC 4.2); the resume paths are these plus `/:uid`. */
export const ROUTES = {
  authorization: `${OAUTH2_PATH}/authorize`,
  token: `${OAUTH2_PATH}/token`,
  userinfo: `${OAUTH2_PATH}/userinfo`,
  introspection: `${OAUTH2_PATH}/introspect`,
  revocation: `${OAUTH2_PATH}/revoke`,
  registration: `${OAUTH2_PATH}/register`,
  end_session: `${OAUTH2_PATH}/end-session`,
  jwks: '/api/auth/jwks',
  device_authorization: '/api/auth/device/code',
  code_verification: '/api/auth/device',
  pushed_authorization_request: `${OAUTH2_PATH}/par`,
} as const;
