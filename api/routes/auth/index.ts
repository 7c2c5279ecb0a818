// Sign-up, sign-in and sessions, passwords and the first-user bootstrap (SPEC 3.1, 4.1); mounted by api/routes/index.ts in
// this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import bootstrapRedeem from './bootstrap-redeem.ts';
import changePassword from './change-password.ts';
import requestPasswordReset from './request-password-reset.ts';
import resetPassword from './reset-password.ts';
import session from './session.ts';
import signIn from './sign-in.ts';
import signOut from './sign-out.ts';
import signUp from './sign-up.ts';

export const authRoutes: RouteDef[] = [bootstrapRedeem, signUp, signIn, signOut, session, changePassword, requestPasswordReset, resetPassword];
