// A file field of a generated input form (views/input-form.ts): choosing a file uploads it
// through the API's uploads flow, as any client does (POST /api/uploads, then PUT the bytes to
// its upload URL), and writes the upload's id into the field the form sends. Without script the
// field takes an id typed in.
async function problemText(res) {
  const body = await res.json().catch(() => ({}));
  return body.detail ?? `HTTP ${res.status}`;
}

async function upload(file, orgId, spaceId) {
  const res = await fetch('/api/uploads', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-org-id': orgId, 'x-space-id': spaceId },
    body: JSON.stringify({ name: file.name, contentType: file.type || 'application/octet-stream', size: file.size }),
  });
  if (!res.ok) throw new Error(await problemText(res));
  const created = await res.json();
  // The upload URL is on PUBLIC_URL; this page came from the same API, and its CSP allows this
  // origin alone: the URL's path (the token is the credential) is sent here.
  const url = new URL(created.uploadUrl);
  const put = await fetch(url.pathname + url.search, { method: 'PUT', body: file, headers: { 'content-type': 'application/octet-stream' } });
  if (!put.ok) throw new Error(await problemText(put));
  return created.id;
}

export function connect(root) {
  const id = root.dataset.target;
  const field = document.getElementById(id);
  const picker = document.getElementById(`${id}-file`);
  const status = document.getElementById(`${id}-upload`);
  if (!field || !picker) return;
  picker.hidden = false;
  const { orgId, spaceId } = document.body.dataset;
  picker.addEventListener('change', async () => {
    const files = [...picker.files];
    if (!files.length) return;
    const submit = field.form?.querySelector('button[type=submit]');
    const names = files.map((f) => f.name).join(', ');
    if (submit) submit.disabled = true;
    root.dataset.state = 'uploading';
    status.textContent = `Uploading ${names}…`;
    try {
      const ids = [];
      for (const file of files) ids.push(await upload(file, orgId, spaceId));
      field.value = ids.join(', ');
      field.removeAttribute('aria-invalid');
      root.dataset.state = 'uploaded';
      status.textContent = `Uploaded ${names}.`;
    } catch (err) {
      root.dataset.state = 'failed';
      status.textContent = `${names} was not uploaded: ${err.message}`;
    } finally {
      if (submit) submit.disabled = false;
    }
  });
}
