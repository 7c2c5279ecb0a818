// "Copy id": copies the text of `data-copy-target` and says so.
export function connect(button) {
  const target = document.getElementById(button.dataset.copyTarget);
  if (!target) return;
  const said = document.createElement('span');
  said.className = 'visually-hidden';
  said.setAttribute('role', 'status');
  button.after(said);
  const label = button.textContent;
  button.addEventListener('click', async () => {
    const text = target.textContent.trim();
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard (an insecure origin): select the text for the person to copy.
      const range = document.createRange();
      range.selectNodeContents(target);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }
    button.textContent = 'Copied';
    said.textContent = `${text} copied`;
    setTimeout(() => {
      button.textContent = label;
      said.textContent = '';
    }, 2000);
  });
}
