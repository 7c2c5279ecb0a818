// POST the sign-in form of an interaction: the service's own email and password (or, for a
// space-level client with `allowSignup`, a new account), then the subject the client's level
// calls for (shared/oidc/accounts.ts).
import { ProblemError } from '../../../shared/errors.ts';
import { burnVerification, verifyPassword } from '../../../shared/identity/passwords.ts';
import { createUser, findUserByEmail } from '../../../shared/identity/users.ts';
import { subjectFor } from '../../../shared/oidc/accounts.ts';
import type { User } from '../../../shared/db/models.ts';
import { readForm } from '../../html/form.ts';
import { defineRoute } from '../../route.ts';
import { csrfFor, csrfMatches, currentInteraction, finish, whereText } from './_interaction.ts';
import { messagePage, signInPage } from './pages.ts';
import { INTERACTION_PATH } from './_paths.ts';

const html = (description: string) => ({ description, contentType: 'text/html', schema: { type: 'string' } });

const REFUSALS = {
  not_a_member: 'You are not a member of the organization that owns this application.',
  signup_closed: 'This application does not accept new people. Ask its owner to add you.',
} as const;

export default defineRoute<unknown, unknown, { uid: string }>({
  method: 'post',
  path: `${INTERACTION_PATH}/:uid/login`,
  operationId: 'oidcInteractionLogin',
  summary: 'Submit the sign-in page',
  description:
    'Form fields `csrf`, `mode` (`signin` or `signup`), `email`, `password` (and `name` to sign up). A wrong password, a refused ' +
    "person (not a member of an org-level client's organization; not an end-user of a space-level client without `allowSignup`) " +
    're-shows the page with the reason. Success redirects (303) onwards.',
  tag: 'OIDC',
  auth: 'none',
  rateLimit: { points: 10, duration: 60, by: 'ip', productionOnly: true },
  params: { type: 'object', properties: { uid: { type: 'string', maxLength: 128 } } },
  streamBody: {
    contentType: 'application/x-www-form-urlencoded',
    schema: {
      type: 'object',
      required: ['csrf', 'email', 'password'],
      properties: {
        csrf: { type: 'string' },
        mode: { enum: ['signin', 'signup'] },
        email: { type: 'string' },
        password: { type: 'string' },
        name: { type: 'string' },
      },
    },
  },
  responses: {
    303: { description: 'Signed in: onwards to consent or back to the application' },
    400: { ...html('The page again, with the reason'), problem: true },
    401: html('The page again: wrong email or password'),
    403: html('The page again: this person may not sign in here, or the CSRF value is wrong'),
  },
  async handler(ctx) {
    const form = await readForm(ctx);
    const interaction = await currentInteraction(ctx);
    if (!interaction) return;
    const { details, client } = interaction;
    const { knex } = ctx.services;
    if (!csrfMatches(ctx, details.uid, form.get('csrf'))) {
      return messagePage(ctx, 403, 'This form has expired', 'Reload the sign-in page and try again.');
    }
    if (details.prompt.name !== 'login') return messagePage(ctx, 400, 'You are already signed in', 'Go back to the application.');
    const email = (form.get('email') ?? '').trim();
    const password = form.get('password') ?? '';
    const signup = form.get('mode') === 'signup' && client.level === 'space' && client.allow_signup;
    const where = await whereText(knex, client);
    const again = (status: number, error: string) =>
      signInPage(ctx, status, {
        uid: details.uid,
        csrf: csrfFor(ctx, details.uid),
        clientName: client.name,
        audience: client.level === 'space' ? `to use it ${where}` : `with your account, to act ${where}`,
        signup: client.level === 'space' && client.allow_signup,
        email,
        error,
      });
    let user: User | undefined;
    if (signup) {
      const name = (form.get('name') ?? '').trim();
      if (!name || !email.includes('@') || password.length < 8) return again(400, 'Enter your name, a valid email and a password of at least 8 characters.');
      try {
        user = await createUser(knex, { email, password, name });
      } catch (err) {
        if (err instanceof ProblemError && err.code === 'email_taken') return again(400, 'An account with this email exists already: sign in with it above.');
        throw err;
      }
    } else {
      user = email ? await findUserByEmail(knex, email) : undefined;
      if (!user) await burnVerification(password);
      if (!user || !(await verifyPassword(user.password_hash, password))) return again(401, 'The email or the password is wrong.');
    }
    const subject = await subjectFor(knex, client, user);
    if ('refused' in subject) return again(403, REFUSALS[subject.refused]);
    await finish(ctx, interaction, { login: { accountId: subject.sub } }, false);
  },
});
