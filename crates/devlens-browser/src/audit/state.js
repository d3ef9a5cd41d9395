function(o, lexical) {
  // `this` is the element asked about (callFunctionOn), or the window (a plain call).
  const target = this && this.nodeType === 1 ? this : null;
  const notes = [];
  const SCAN = 5000; // elements looked at for framework marks
  const FIBERS = 20000; // fibers or vnodes walked at most

  // ---- values: bounded, cycles marked, secrets redacted ----
  const SECRET_PART = /passw(or)?d|passphrase|secret|token|apikey|privatekey|credential|jwt|bearer/;
  const SECRET_WORD = new Set(['pass', 'pwd', 'auth', 'authorization', 'session', 'sessionid', 'sid', 'cookie']);
  const secretKey = (k) => {
    const w = String(k).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
    return SECRET_PART.test(w.join('')) || w.some((x) => SECRET_WORD.has(x));
  };
  const secretValue = (s) => s.length >= 16 && !/\s/.test(s) && (
    /^eyJ[\w-]+\.[\w-]+\./.test(s) || /^(sk|pk|rk)_(live|test)_/.test(s) || /^(gh[pousr]_|xox[abpr]-|AKIA[0-9A-Z]{12})/.test(s) ||
    /^[a-f0-9]{32,}$/i.test(s) || (s.length >= 32 && /^[A-Za-z0-9+/_=-]+$/.test(s) && /\d/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s)));
  const REDACTED = '[redacted]';
  const node = (n) => {
    if (n.nodeType !== 1) return n.nodeType === 3 ? '#text' : n.nodeName;
    return '<' + n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + '>';
  };
  const fnName = (f) => (f && (f.displayName || f.name)) || '';
  const elementName = (t) => typeof t === 'string' ? t : t && typeof t === 'object' ? (t.displayName || fnName(t.type) || fnName(t.render) || (t._context ? (t._context.displayName || 'Context') : 'Anonymous')) : fnName(t) || 'Anonymous';
  const value = (v) => {
    let budget = 400;
    const stack = new Set();
    const walk = (v, depth, key) => {
      if (key !== undefined && v !== null && v !== undefined && v !== '' && typeof v !== 'boolean' && typeof v !== 'function' && secretKey(key)) return REDACTED;
      if (--budget < 0) return '[…]';
      if (v === null || typeof v === 'boolean') return v;
      if (typeof v === 'string') return secretValue(v) ? REDACTED : v.length > 200 ? v.slice(0, 199) + '…' : v;
      if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
      if (typeof v === 'bigint') return v + 'n';
      if (v === undefined) return '[undefined]';
      if (typeof v === 'symbol') return v.toString();
      if (typeof v === 'function') return '[function ' + (fnName(v) || 'anonymous') + ']';
      if (typeof Node !== 'undefined' && v instanceof Node) return node(v);
      if (v === window) return '[window]';
      if (stack.has(v)) return '[circular]';
      if (v.__v_isRef) { stack.add(v); try { return walk(v.value, depth, key); } finally { stack.delete(v); } }
      if (v.$$typeof === Symbol.for('react.element')) return '<' + elementName(v.type) + (v.key != null ? ' key=' + v.key : '') + '>';
      if (v.__v_isVNode) return '[vnode ' + elementName(v.type) + ']';
      if ('stateNode' in v && 'return' in v && 'memoizedProps' in v) return '[fiber ' + elementName(v.type) + ']';
      if (v.vnode && v.subTree !== undefined && v.uid !== undefined) return '[component ' + vueName(v) + ']';
      if (v instanceof Error) return String(v);
      if (v instanceof Date) return isNaN(v) ? 'Invalid Date' : v.toISOString();
      if (v instanceof RegExp) return String(v);
      if (v instanceof Promise) return '[promise]';
      if (depth >= 4) return Array.isArray(v) ? '[array(' + v.length + ')]' : '[object]';
      stack.add(v);
      try {
        if (v instanceof Map) return { '[map]': Array.from(v.entries()).slice(0, 30).map(([k, x]) => [walk(k, depth + 1), walk(x, depth + 1, typeof k === 'string' ? k : undefined)]) };
        if (v instanceof Set) return Array.from(v).slice(0, 30).map((x) => walk(x, depth + 1));
        if (Array.isArray(v) || ArrayBuffer.isView(v)) {
          const arr = Array.from(Array.prototype.slice.call(v, 0, 30), (x) => walk(x, depth + 1));
          if (v.length > 30) arr.push('… ' + (v.length - 30) + ' more');
          return arr;
        }
        const out = {};
        const keys = Object.keys(v);
        for (let i = 0; i < keys.length; i++) {
          if (i >= 30) { out['…'] = (keys.length - 30) + ' more keys'; break; }
          const k = keys[i];
          // Own getters are not run: they are the app's code and may have side effects.
          const d = Object.getOwnPropertyDescriptor(v, k);
          try { out[k] = d && d.get ? '[getter]' : walk(d ? d.value : v[k], depth + 1, k); } catch (e) { out[k] = '[unreadable]'; }
        }
        return out;
      } finally { stack.delete(v); }
    };
    let out;
    try { out = walk(v, 0); } catch (e) { out = '[unreadable]'; }
    const json = JSON.stringify(out);
    return json && json.length > o.maxValueBytes ? json.slice(0, o.maxValueBytes) + '… (cut; raise maxValueBytes)' : out;
  };
  const page = (all) => ({ items: all.slice(o.offset, o.offset + o.limit), total: all.length });

  // ---- finding the frameworks ----
  const els = [document.documentElement].concat(Array.from(document.querySelectorAll('body, body *')).slice(0, SCAN));
  const keyOf = (el, prefix) => Object.keys(el).find((k) => k.startsWith(prefix));
  const reactRoots = [], vueApps = [], marks = { fiber: false, preact: false, vue2: null, ng: null, svelte: false };
  for (const el of els) {
    const rc = keyOf(el, '__reactContainer$');
    if (rc && el[rc] && el[rc].stateNode) reactRoots.push({ el, root: el[rc].stateNode });
    else if (el._reactRootContainer && el._reactRootContainer._internalRoot) reactRoots.push({ el, root: el._reactRootContainer._internalRoot, legacy: true });
    if (!marks.fiber && keyOf(el, '__reactFiber$')) marks.fiber = true;
    if (el.__vue_app__) vueApps.push({ el, app: el.__vue_app__ });
    if (!marks.vue2 && el.__vue__) marks.vue2 = el.__vue__;
    if (!marks.preact && (el.__k || el._prevVNode) && !rc) marks.preact = true;
    if (!marks.ng && el.getAttribute('ng-version')) marks.ng = el;
    if (!marks.svelte && (el.__svelte_meta || /(^|\s)svelte-[a-z0-9]+/.test(el.getAttribute('class') || ''))) marks.svelte = true;
  }
  const label = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
  const frameworks = [];
  const add = (name, version, detail) => frameworks.push({ name, version: version ? String(version) : null, detail: detail || '' });
  const hook = window.__REACT_DEVTOOLS_GLOBAL_HOOK__;
  const hookVersions = hook && hook.renderers ? Array.from(hook.renderers.values()).map((r) => r.version).filter(Boolean) : [];
  if (reactRoots.length || marks.fiber || (window.React && window.React.version)) {
    const version = (window.React && window.React.version) || hookVersions[0] || (window.ReactDOM && window.ReactDOM.version);
    add('React', version, reactRoots.length ? reactRoots.length + ' root(s): ' + reactRoots.slice(0, 3).map((r) => label(r.el) + (r.legacy ? ' (legacy render)' : '')).join(', ') : 'no mounted root found');
  }
  if (window.__PREACT_DEVTOOLS__ || marks.preact || (window.preact && window.preact.render)) add('Preact', window.preact && window.preact.version, '');
  for (const { el, app } of vueApps) add('Vue', app.version, 'app on ' + label(el));
  const vue2 = marks.vue2 || (window.Vue && /^2\./.test(window.Vue.version || '') ? window.Vue : null);
  if (vue2) {
    let c = vue2.constructor;
    while (c && !c.version && c.super) c = c.super;
    add('Vue', (window.Vue && window.Vue.version) || (c && c.version), 'Vue 2 instance');
  }
  if (marks.ng || window.ng || window.getAllAngularRootElements) add('Angular', marks.ng && marks.ng.getAttribute('ng-version'), marks.ng ? 'root ' + label(marks.ng) : '');
  else if (window.angular && window.angular.version) add('AngularJS', window.angular.version.full, '');
  if (window.__svelte || marks.svelte) add('Svelte', window.__svelte && window.__svelte.v ? Array.from(window.__svelte.v).join(', ') : null, window.__svelte ? '' : 'from svelte- class names');
  if (window.__NEXT_DATA__ || window.next || window.__next_f) add('Next.js', window.next && window.next.version, window.__NEXT_DATA__ ? 'pages router, page ' + window.__NEXT_DATA__.page : 'app router');
  const nuxtApp = vueApps.map((a) => a.app.$nuxt).find(Boolean);
  if (window.__NUXT__ || window.$nuxt || nuxtApp) add('Nuxt', nuxtApp && nuxtApp.versions ? nuxtApp.versions.nuxt : null, window.$nuxt ? 'Nuxt 2' : '');

  // ---- React fibers ----
  const TAGS = { 0: 'function', 1: 'class', 2: 'function', 11: 'forwardRef', 15: 'memo' };
  const isComp = (f) => f.tag in TAGS;
  const fiberName = (f) => f.tag === 13 ? 'Suspense' : f.tag === 11 ? (f.type.displayName || fnName(f.type.render) || 'ForwardRef') : elementName(f.type);
  const currentRoots = () => reactRoots.map((r) => ({ el: r.el, fiber: r.root.current }));
  const walkFibers = (start, visit) => {
    let n = 0;
    const go = (f, d) => {
      for (; f && n < FIBERS; f = f.sibling) { n++; if (visit(f, d) !== false) go(f.child, d + 1); }
    };
    go(start, 0);
  };
  const hostFiber = (el) => {
    for (let n = el; n; n = n.parentElement) {
      const k = keyOf(n, '__reactFiber$');
      if (!k) continue;
      // The node's own fiber may be the stale alternate: look for the current one.
      let found = null;
      for (const r of currentRoots()) walkFibers(r.fiber, (f) => { if (found) return false; if (f.stateNode === n) found = f; });
      return found || n[k];
    }
    return null;
  };
  const ownerComp = (f) => { while (f && !isComp(f)) f = f.return; return f; };
  const parentsOf = (f) => { const out = []; for (f = f.return; f && out.length < 30; f = f.return) if (isComp(f)) out.push(fiberName(f)); return out; };
  const fiberKind = (f, memo) => memo || f.tag === 15 ? 'memo' : f.tag === 1 ? 'class' : f.tag === 11 ? 'forwardRef' : null;
  const reactTree = (start, path) => {
    const nodes = [];
    let memo = false; // a memo() wrapper's name and kind go to the component it wraps
    const go = (f, d, base) => {
      for (; f && nodes.length < FIBERS; f = f.sibling) {
        if (f.tag === 14) { memo = true; go(f.child, d, base); continue; }
        const shown = isComp(f) || f.tag === 13;
        if (shown) { nodes.push({ depth: base + d, name: fiberName(f), key: f.key, kind: fiberKind(f, memo) }); memo = false; }
        if (!shown || d < o.depth) go(f.child, shown ? d + 1 : d, base);
      }
    };
    if (start) {
      nodes.push({ depth: 0, name: fiberName(start), key: start.key, kind: fiberKind(start, start.return && start.return.tag === 14), selected: true });
      go(start.child, 1, 0);
    } else {
      for (const r of currentRoots()) { nodes.push({ depth: 0, name: '(root ' + label(r.el) + ')', key: null, kind: 'root' }); go(r.fiber.child, 0, 1); }
    }
    return { path, ...page(nodes) };
  };
  const hookKind = (h) => {
    const q = h.queue, s = h.memoizedState;
    if (q && 'getSnapshot' in q) return 'syncExternalStore';
    if (q && q.lastRenderedReducer) return /typeof\s+\w+\s*(===?\s*['"]function['"]\s*)?\?\s*\w+\(\w+\)\s*:\s*\w+/.test(String(q.lastRenderedReducer)) ? 'state' : 'reducer';
    if (s && typeof s === 'object' && 'create' in s && 'deps' in s && 'tag' in s) return 'effect';
    if (s && typeof s === 'object' && !Array.isArray(s) && Object.keys(s).length === 1 && 'current' in s) return 'ref';
    if (Array.isArray(s) && s.length === 2 && (s[1] === null || Array.isArray(s[1]))) return typeof s[0] === 'function' ? 'callback' : 'memo';
    return 'other';
  };
  const hookValue = (h, kind) => {
    const s = h.memoizedState;
    if (kind === 'effect') return '[' + fnName(s.create) + ' effect, deps ' + (s.deps ? s.deps.length : 'none') + ']';
    if (kind === 'ref') return s.current;
    if (kind === 'memo' || kind === 'callback') return s[0];
    return s;
  };
  const reactComponent = (f) => {
    const props = {};
    for (const k of Object.keys(f.memoizedProps || {})) if (k !== 'children') props[k] = f.memoizedProps[k];
    const hooks = [];
    if (f.tag !== 1) for (let h = f.memoizedState, i = 0; h && i < 100; h = h.next, i++) {
      const kind = hookKind(h);
      hooks.push({ index: i, kind, value: value(hookValue(h, kind)) });
    }
    const context = [];
    for (let c = f.dependencies && f.dependencies.firstContext; c && context.length < 5; c = c.next) context.push({ name: c.context.displayName || 'Context', kind: 'context', value: value(c.memoizedValue) });
    const p = page(hooks);
    return {
      component: {
        framework: 'React', name: fiberName(f), key: f.key, kind: TAGS[f.tag] || 'component', parents: parentsOf(f),
        props: value(props), state: f.tag === 1 && f.stateNode ? value(f.stateNode.state) : null, hooks: p.items, context,
      },
      total: p.total,
    };
  };

  // ---- Vue 3 instances ----
  const vueName = (i) => { const t = i.type || {}; return t.name || t.__name || (t.__file ? t.__file.split('/').pop().replace(/\.vue$/, '') : i.parent ? 'Anonymous' : 'App'); };
  const vueRoot = (a) => a.app._instance || (a.el._vnode && a.el._vnode.component);
  const vueChildren = (inst) => {
    const out = [];
    const go = (vn, n) => {
      if (!vn || typeof vn !== 'object' || n > 200) return;
      if (vn.component) { out.push(vn.component); return; }
      if (vn.suspense) { go(vn.suspense.activeBranch, n + 1); return; }
      if (Array.isArray(vn.children)) for (const c of vn.children) go(c, n + 1);
    };
    go(inst.subTree, 0);
    return out;
  };
  const vueOwner = (el) => {
    // Production builds do not mark elements with their component: find the one that rendered it.
    const owner = new Map();
    let n = 0;
    const go = (vn, inst) => {
      if (!vn || typeof vn !== 'object' || ++n > FIBERS) return;
      if (vn.component) { const c = vn.component; go(c.subTree, c); return; }
      if (vn.el && vn.el.nodeType === 1 && !owner.has(vn.el)) owner.set(vn.el, inst);
      if (vn.suspense) go(vn.suspense.activeBranch, inst);
      if (Array.isArray(vn.children)) for (const c of vn.children) go(c, inst);
    };
    for (const a of vueApps) { const r = vueRoot(a); if (r) go(r.subTree, r); }
    for (let e = el; e; e = e.parentElement) if (owner.has(e)) return owner.get(e);
    return null;
  };
  const vueParents = (i) => { const out = []; for (i = i.parent; i && out.length < 30; i = i.parent) out.push(vueName(i)); return out; };
  const vueTree = (start, path) => {
    const nodes = [];
    const go = (inst, d) => {
      if (nodes.length >= FIBERS) return;
      nodes.push({ depth: d, name: vueName(inst), key: inst.vnode && inst.vnode.key != null ? inst.vnode.key : null, kind: null, selected: inst === start });
      if (d < o.depth + (start ? 0 : 1)) for (const c of vueChildren(inst)) go(c, d + 1);
    };
    if (start) go(start, 0);
    else for (const a of vueApps) { nodes.push({ depth: 0, name: '(app ' + label(a.el) + ')', key: null, kind: 'root' }); const r = vueRoot(a); if (r) go(r, 1); }
    return { path, ...page(nodes) };
  };
  const nonEmpty = (x) => x && typeof x === 'object' && Object.keys(x).length ? value(x) : null;
  const vueComponent = (i) => {
    let computed = null;
    if (i.type && i.type.computed && i.proxy) { computed = {}; for (const k of Object.keys(i.type.computed)) { try { computed[k] = i.proxy[k]; } catch (e) { computed[k] = '[threw]'; } } }
    return {
      component: {
        framework: 'Vue', name: vueName(i), key: i.vnode && i.vnode.key != null ? i.vnode.key : null, kind: 'component', parents: vueParents(i),
        props: value(i.props || {}), setup: nonEmpty(i.setupState), state: nonEmpty(i.data), computed: nonEmpty(computed), hooks: [], context: [],
      },
      total: 0,
    };
  };

  // ---- which framework answers ----
  const want = o.framework;
  const haveReact = reactRoots.length > 0, haveVue = vueApps.length > 0;
  const pick = () => {
    if (want === 'react' && !haveReact) throw { kind: 'framework', message: 'no mounted React app on this page' };
    if (want === 'vue' && !haveVue) throw { kind: 'framework', message: 'no Vue 3 app on this page' };
    if (!haveReact && !haveVue) throw { kind: 'framework', message: 'the ' + o.view + ' view reads React and Vue 3 components, and this page has no mounted React or Vue 3 app' };
    if (target) {
      if (want !== 'vue' && haveReact) { const f = hostFiber(target); const c = f && ownerComp(f); if (c) return { fw: 'react', comp: c }; }
      if (want !== 'react' && haveVue) { const c = vueOwner(target); if (c) return { fw: 'vue', comp: c }; }
      throw { kind: 'component', message: label(target) + ' is not rendered by a ' + (want === 'vue' ? 'Vue 3' : want === 'react' ? 'React' : 'React or Vue 3') + ' component' };
    }
    if (haveReact && haveVue && !want) notes.push('this page has React and Vue apps; showing React (pass framework "vue" for the other)');
    return { fw: want === 'vue' || !haveReact ? 'vue' : 'react', comp: null };
  };

  // ---- stores ----
  const stores = () => {
    const seen = new Set(), out = [];
    const consider = (s, where) => {
      if (!s || (typeof s !== 'object' && typeof s !== 'function') || seen.has(s) || out.length >= 50) return;
      if (typeof s.getState !== 'function' || typeof s.subscribe !== 'function') return;
      seen.add(s);
      const kind = typeof s.dispatch === 'function' ? 'redux' : typeof s.setState === 'function' ? 'zustand' : 'store';
      let state;
      try { state = value(s.getState()); } catch (e) { state = '[getState threw: ' + e + ']'; }
      out.push({ name: where, kind, value: state });
    };
    for (const k of addedGlobals()) { try { consider(window[k], 'window.' + k); } catch (e) { /* a getter that throws */ } }
    for (const r of currentRoots()) walkFibers(r.fiber, (f) => {
      const p = f.memoizedProps;
      if (p && typeof p === 'object') {
        consider(p.store, '<' + fiberName(f) + '> props.store');
        if (f.tag === 10 && p.value) { consider(p.value, '<' + elementName(f.type) + '.Provider> value'); consider(p.value.store, '<' + elementName(f.type) + '.Provider> value.store'); }
      }
      if (f.tag === 0 || f.tag === 15) for (let h = f.memoizedState, i = 0; h && i < 50; h = h.next, i++) {
        const s = h.memoizedState;
        if (s && typeof s === 'object') { consider(s.current, '<' + fiberName(f) + '> hook ' + i); if (Array.isArray(s)) consider(s[0], '<' + fiberName(f) + '> hook ' + i); }
      }
    });
    for (const a of vueApps) {
      const gp = a.app.config && a.app.config.globalProperties;
      const pinia = gp && gp.$pinia;
      if (pinia && pinia._s) for (const [id, s] of pinia._s) if (out.length < 50) out.push({ name: id, kind: 'pinia', value: value(s.$state) });
      if (gp && gp.$store && gp.$store.commit && !seen.has(gp.$store)) { seen.add(gp.$store); out.push({ name: '$store', kind: 'vuex', value: value(gp.$store.state) }); }
    }
    return out;
  };

  // ---- globals: what the page added to a blank window ----
  function addedGlobals() {
    if (addedGlobals.cache) return addedGlobals.cache;
    const frame = document.createElement('iframe');
    frame.style.display = 'none';
    let blank = new Set();
    try {
      (document.body || document.documentElement).appendChild(frame);
      blank = new Set(Object.getOwnPropertyNames(frame.contentWindow));
    } finally { frame.remove(); }
    return (addedGlobals.cache = Object.getOwnPropertyNames(window).filter((k) => !blank.has(k) && !/^\d+$/.test(k)));
  }
  const preview = (v, name) => {
    if (v !== null && v !== undefined && typeof v !== 'function' && typeof v !== 'boolean' && secretKey(name)) return REDACTED;
    if (typeof v === 'function') {
      const src = Function.prototype.toString.call(v);
      const head = /^class\b/.test(src) ? 'class ' + fnName(v) : 'function ' + (fnName(v) || name) + '(' + ((/\(([^)]*)\)/.exec(src) || [])[1] || '').replace(/\s+/g, ' ').slice(0, 40) + ')';
      const keys = Object.keys(v).slice(0, 6);
      return head + (keys.length ? ' {' + keys.join(', ') + (Object.keys(v).length > 6 ? ', …' : '') + '}' : '');
    }
    if (v && typeof v === 'object' && !(v instanceof Node)) {
      if (v === window) return 'the window';
      if (Array.isArray(v)) return 'array(' + v.length + ')';
      const keys = Object.keys(v);
      if (typeof v.version === 'string' && keys.length > 5) return 'library ' + v.version + ' {' + keys.slice(0, 6).join(', ') + ', …}';
      return (v.constructor && v.constructor !== Object ? fnName(v.constructor) + ' ' : '') + '{' + keys.slice(0, 8).join(', ') + (keys.length > 8 ? ', … ' + keys.length + ' keys' : '') + '}';
    }
    const s = JSON.stringify(value(v));
    return s && s.length > 120 ? s.slice(0, 119) + '…' : s;
  };
  const typeOf = (v) => v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'function' && /^class\b/.test(Function.prototype.toString.call(v)) ? 'class' : typeof v;
  const globals = () => {
    const out = [];
    for (const k of addedGlobals()) {
      let v;
      try { const d = Object.getOwnPropertyDescriptor(window, k); v = d && d.get ? undefined : window[k]; if (d && d.get) { out.push({ name: k, kind: 'getter', value: '[getter]' }); continue; } } catch (e) { continue; }
      out.push({ name: k, kind: typeOf(v), value: preview(v, k) });
    }
    for (const [k, get] of Object.entries(lexical || {})) {
      try { const v = get(); out.push({ name: k, kind: typeOf(v) + ' (let/const)', value: preview(v, k) }); } catch (e) { out.push({ name: k, kind: 'uninitialised (let/const)', value: '' }); }
    }
    return out;
  };

  // ---- the views ----
  try {
    const base = { frameworks, notes };
    if (o.view === 'frameworks') {
      const st = stores();
      for (const s of st) add(s.kind === 'redux' ? 'Redux' : s.kind === 'zustand' ? 'Zustand' : s.kind === 'pinia' ? 'Pinia' : s.kind === 'vuex' ? 'Vuex' : 'Store', null, 'store ' + s.name);
      return base;
    }
    if (o.view === 'globals') { const p = page(globals()); return { ...base, items: p.items, total: p.total }; }
    if (o.view === 'stores') { const p = page(stores()); return { ...base, items: p.items, total: p.total }; }
    const { fw, comp } = pick();
    if (o.view === 'tree') {
      if (fw === 'react') return { ...base, tree: reactTree(comp, comp ? parentsOf(comp).reverse() : []) };
      return { ...base, tree: vueTree(comp, comp ? vueParents(comp).reverse() : []) };
    }
    // component: the element's, else the app's first component
    let c = comp;
    if (!c && fw === 'react') walkFibers(currentRoots()[0].fiber, (f) => { if (c) return false; if (isComp(f)) c = f; });
    if (!c && fw === 'vue') c = vueRoot(vueApps[0]);
    if (!c) throw { kind: 'component', message: 'the app has no component mounted yet' };
    if (!comp) notes.push('no element given: showing the app\'s top component (pass element for another)');
    return { ...base, ...(fw === 'react' ? reactComponent(c) : vueComponent(c)) };
  } catch (e) {
    if (e && e.kind) return { frameworks, notes, error: e };
    throw e;
  }
}
