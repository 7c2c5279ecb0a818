// How an OAuth 2 auth's provider is read from either shape, how the client authenticates at the
// token endpoint, and the credential header a bare auth-scheme prefix makes.
import { expect } from 'chai';
import { authsOf, type IntegrationAuth } from '../../shared/integrations/auths.ts';
import { credentialHeader } from '../../shared/integrations/deliver.ts';
import { clientAuthentication } from '../../shared/integrations/oauth2.ts';

const client = { clientId: 'id:1', clientSecret: 's&cret' };

describe('OAuth 2 provider settings', () => {
  it("reads the package format's shape: endpoints, default scopes, method, PKCE, parameters and the _meta separator", () => {
    const [auth] = authsOf({
      auths: {
        primary: {
          type: 'oauth2',
          authorization_endpoint: 'https://linear.example/oauth/authorize',
          token_endpoint: 'https://api.linear.example/oauth/token',
          default_scopes: ['read', 'write'],
          token_endpoint_auth_method: 'client_secret_post',
          authorization_params: { prompt: 'consent' },
          _meta: { 'dev.appstrate/oauth': { scope_separator: ',' } },
        },
      },
    });
    expect(auth.connect).to.equal('oauth2');
    expect(auth.oauth2).to.deep.equal({
      authorizationUrl: 'https://linear.example/oauth/authorize',
      tokenUrl: 'https://api.linear.example/oauth/token',
      scopes: ['read', 'write'],
      scopeSeparator: ',',
      pkce: true,
      tokenEndpointAuthMethod: 'client_secret_post',
      authorizationParams: { prompt: 'consent' },
    });
  });

  it('takes PKCE from code_challenge_methods_supported, the separator from dev.service/oauth too, and defaults to Basic and a space', () => {
    const settings = (extra: Record<string, unknown>) =>
      authsOf({ auths: { a: { type: 'oauth2', authorization_endpoint: 'https://x.example/a', token_endpoint: 'https://x.example/t', ...extra } } })[0].oauth2!;
    expect(settings({}).pkce).to.equal(true);
    expect(settings({ code_challenge_methods_supported: ['S256'] }).pkce).to.equal(true);
    expect(settings({ code_challenge_methods_supported: [] }).pkce).to.equal(false);
    expect(settings({ code_challenge_methods_supported: ['plain'] }).pkce).to.equal(false);
    expect(settings({}).tokenEndpointAuthMethod).to.equal('client_secret_basic');
    expect(settings({}).scopeSeparator).to.equal(' ');
    expect(settings({ _meta: { 'dev.service/oauth': { scope_separator: '+' } } }).scopeSeparator).to.equal('+');
    // an issuer alone names no endpoint: not connectable
    expect(authsOf({ auths: { a: { type: 'oauth2', issuer: 'https://accounts.example' } } })[0].oauth2).to.equal(undefined);
  });

  it('still reads the DESIGN.md 7 oauth2 block (client_secret_basic)', () => {
    const [auth] = authsOf({
      auths: { a: { type: 'oauth2', oauth2: { authorization_url: 'https://x.example/a', token_url: 'https://x.example/t', scopes: ['s'], pkce: false } } },
    });
    expect(auth.oauth2).to.deep.include({
      authorizationUrl: 'https://x.example/a',
      tokenUrl: 'https://x.example/t',
      scopes: ['s'],
      scopeSeparator: ' ',
      pkce: false,
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
  });

  it('authenticates the client as the auth says', () => {
    expect(clientAuthentication('client_secret_basic', client)).to.deep.equal({
      headers: { authorization: `Basic ${Buffer.from('id%3A1:s%26cret').toString('base64')}` },
      body: {},
    });
    expect(clientAuthentication('client_secret_post', client)).to.deep.equal({ headers: {}, body: { client_id: 'id:1', client_secret: 's&cret' } });
    expect(clientAuthentication('none', client)).to.deep.equal({ headers: {}, body: { client_id: 'id:1' } });
  });
});

describe('credential header prefix', () => {
  const auth = (name: string, prefix?: string): IntegrationAuth => ({
    key: 'k',
    type: 'oauth2',
    credentialsSchema: {},
    fields: [],
    connect: 'oauth2',
    authorizedUris: [],
    delivery: { in: 'header', name, prefix, value: '{$credential.access_token}' },
  });
  const cred = { access_token: 'tok' };

  it('puts the space an Authorization scheme needs after a bare scheme, and leaves other prefixes as written', () => {
    expect(credentialHeader(auth('Authorization', 'Bearer'), cred)).to.deep.equal(['Authorization', 'Bearer tok']);
    expect(credentialHeader(auth('authorization', 'Zoho-oauthtoken'), cred)).to.deep.equal(['authorization', 'Zoho-oauthtoken tok']);
    expect(credentialHeader(auth('Authorization', 'Bearer '), cred)).to.deep.equal(['Authorization', 'Bearer tok']);
    expect(credentialHeader(auth('Authorization', 'Token token='), cred)).to.deep.equal(['Authorization', 'Token token=tok']);
    expect(credentialHeader(auth('X-Api-Key', 'key'), cred)).to.deep.equal(['X-Api-Key', 'keytok']);
    expect(credentialHeader(auth('Authorization'), cred)).to.deep.equal(['Authorization', 'tok']);
  });
});
