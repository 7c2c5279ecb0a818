// The console's one script (api/console/README.md): it starts the live parts of the page, each
// an element with `data-controller="<name>"` handled by controllers/<name>.js. Pages work
// without it; it adds live updates, tabs and conveniences.
import { mount } from './lib/mount.js';

document.documentElement.classList.add('js');
mount(document);
