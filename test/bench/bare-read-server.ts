// The baseline of the read benchmark (reads.ts): a bare Koa app answering a run by primary key
// from a pg pool, with nothing else on the path (no auth, tenancy, visibility or DTO).
import Koa from 'koa';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = new Koa();
app.use(async (ctx) => {
  const id = ctx.path.slice('/runs/'.length);
  const { rows } = await pool.query('select * from runs where id = $1', [id]);
  ctx.body = rows[0] ?? null;
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
