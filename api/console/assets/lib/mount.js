// Connects the controllers of the elements under `root` that have not been connected yet; run
// again after a region of the page is swapped for a fresh copy.
const connected = new WeakSet();

export function mount(root) {
  const elements = root instanceof Element && root.matches('[data-controller]') ? [root] : [];
  elements.push(...root.querySelectorAll('[data-controller]'));
  for (const el of elements) {
    if (connected.has(el)) continue;
    connected.add(el);
    for (const name of el.dataset.controller.split(/\s+/)) {
      if (!/^[a-z-]+$/.test(name)) continue;
      import(`../controllers/${name}.js`).then((m) => m.connect(el)).catch((err) => console.error(`console: controller ${name} failed`, err));
    }
  }
}
