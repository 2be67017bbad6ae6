/* complan's viewer page script (planner/view/viewer_app.js, embedded into the
 * library at build time and inlined into every page by planner/view/viewer.c).
 *
 * It draws what the C side wrote into the #complan-data JSON with three.js:
 * every pose, contact, force scale, camera target and plane size comes from
 * there; this script only builds meshes, places them and plays the frames.
 * Data layout: docs/viewer.md. Script API: window.complan (interfaces §6). */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('complan-data').textContent);
  const T = window.THREE;
  const N = data.time.length;
  const R = data.view.radius;
  document.title = data.title;

  /* ---- page furniture ------------------------------------------------ */
  const css = document.createElement('style');
  css.textContent = [
    'html,body{margin:0;height:100%;overflow:hidden;background:#eef0f3;',
    'font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222}',
    '#cp-view{position:absolute;left:0;right:0;top:0;bottom:52px}',
    '#cp-bar{position:absolute;left:0;right:0;bottom:0;height:52px;display:flex;',
    'align-items:center;gap:12px;padding:0 14px;background:#fff;',
    'border-top:1px solid #c8ccd4;box-sizing:border-box}',
    '#cp-bar input[type=range]{flex:1;min-width:80px}',
    '#cp-bar button{width:70px;padding:4px 0}',
    '#cp-time{font-variant-numeric:tabular-nums;min-width:170px}',
    '#cp-info{position:absolute;left:12px;top:10px;background:rgba(255,255,255,.85);',
    'padding:6px 10px;border-radius:6px;max-width:45%}',
    '#cp-info h1{font-size:15px;margin:0 0 2px}',
    '#cp-info .k{color:#666}',
    '#cp-error{position:absolute;left:50%;top:40%;transform:translate(-50%,-50%);',
    'background:#fff3f3;border:1px solid #d66;padding:12px 16px;display:none}',
    '.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}'
  ].join('');
  document.head.appendChild(css);

  function el(tag, attrs, parent) {
    const e = document.createElement(tag);
    for (const k in attrs) {
      if (k === 'text') e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    if (parent) parent.appendChild(e);
    return e;
  }
  const viewDiv = el('div', { id: 'cp-view' }, document.body);
  const info = el('div', { id: 'cp-info' }, document.body);
  el('h1', { text: data.title }, info);
  const legend = el('div', {}, info);
  const noteBox = el('div', { id: 'cp-note' }, info);
  el('div', { class: 'k', text: 'drag: orbit \u00b7 right-drag: pan \u00b7 wheel: zoom \u00b7 space: play/pause \u00b7 \u2190 \u2192: step' }, info);
  const errBox = el('div', { id: 'cp-error' }, document.body);
  const bar = el('div', { id: 'cp-bar' }, document.body);
  const playBtn = el('button', { id: 'cp-play', text: 'Play' }, bar);
  const slider = el('input', { id: 'cp-slider', type: 'range', min: '0', max: String(Math.max(N - 1, 0)), step: '1', value: '0' }, bar);
  const timeLabel = el('span', { id: 'cp-time' }, bar);
  const speedLabel = el('label', { text: 'speed ' }, bar);
  const speedSel = el('select', { id: 'cp-speed' }, speedLabel);
  for (const s of [0.1, 0.25, 0.5, 1, 2, 4]) {
    const o = el('option', { value: String(s), text: s + '\u00d7' }, speedSel);
    if (s === 1) o.selected = true;
  }
  function toggle(id, label, on) {
    const l = el('label', {}, bar);
    const c = el('input', { id: id, type: 'checkbox' }, l);
    c.checked = on;
    l.appendChild(document.createTextNode(' ' + label));
    return c;
  }
  const showContacts = toggle('cp-contacts', 'contacts', true);
  const showForces = toggle('cp-forces', 'forces', true);
  const showGoal = data.goal ? toggle('cp-goal', 'goal', true) : null;
  const showTree = data.tree ? toggle('cp-tree', 'tree', true) : null;

  function showError(msg) {
    errBox.style.display = 'block';
    errBox.textContent = msg;
  }

  /* ---- the 3D scene ---------------------------------------------------- */
  const scene = new T.Scene();
  scene.background = new T.Color(0xeef0f3);
  scene.add(new T.HemisphereLight(0xffffff, 0x8a8f99, 2.2));
  const sun = new T.DirectionalLight(0xffffff, 1.8);
  sun.position.set(0.6, -0.4, 1.0);
  scene.add(sun);

  const target = new T.Vector3().fromArray(data.view.target);
  const camera = new T.PerspectiveCamera(40, 1, R * 0.01, R * 200);
  camera.up.set(0, 0, 1); /* scenes are z-up */
  camera.position.set(target.x + 0.5 * R, target.y - 2.0 * R, target.z + 1.1 * R);
  camera.lookAt(target);

  let renderer = null;
  let controls = null;
  try {
    renderer = new T.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    viewDiv.appendChild(renderer.domElement);
    controls = new T.OrbitControls(camera, renderer.domElement);
    controls.target.copy(target);
    controls.update();
  } catch (e) {
    renderer = null;
    showError('This page needs WebGL to draw the scene (' + e.message + '). ' +
      'The data and window.complan still work.');
  }

  const palette = [0x4e79a7, 0xe15759, 0x59a14f, 0xb07aa1, 0x76b7b2, 0xedc948, 0x9c755f];
  const linkColour = 0xf28e2b, fixedColour = 0xa4a9b1, planeColour = 0xd5d9e0;
  let freeCount = 0;

  function geometry(s) {
    let g = null;
    switch (s.type) {
      case 'box': g = new T.BoxGeometry(s.size[0], s.size[1], s.size[2]); break;
      case 'sphere': g = new T.SphereGeometry(s.radius, 40, 20); break;
      case 'cylinder':
        g = new T.CylinderGeometry(s.radius, s.radius, s.length, 40);
        g.rotateX(Math.PI / 2); /* three's cylinders run along y, complan's along z */
        break;
      case 'capsule':
        g = new T.CapsuleGeometry(s.radius, s.length, 10, 32);
        g.rotateX(Math.PI / 2);
        break;
      case 'plane': g = new T.PlaneGeometry(s.size, s.size); break;
      case 'mesh': /* vertices [x, y, z, ...] and triangles [i, j, k, ...] */
        g = new T.BufferGeometry();
        g.setAttribute('position', new T.Float32BufferAttribute(s.vertices, 3));
        g.setIndex(s.triangles);
        g.computeVertexNormals();
        break;
    }
    return g;
  }

  function setPose(obj, a, k) {
    obj.position.set(a[k], a[k + 1], a[k + 2]);
    obj.quaternion.set(a[k + 4], a[k + 5], a[k + 6], a[k + 3]); /* three: x, y, z, w */
  }

  /* One group per body or link, placed at the frame pose the C side wrote;
   * its shapes are children at their offsets (poses in that frame). */
  const objects = {};
  const moving = [];
  for (const b of data.bodies) {
    const group = new T.Group();
    group.name = b.name;
    let colour = b.link ? linkColour : b.fixed ? fixedColour : palette[freeCount++ % palette.length];
    const kinds = [];
    for (const s of b.shapes) {
      const g = geometry(s);
      if (!g) continue;
      const plane = s.type === 'plane';
      const mat = new T.MeshStandardMaterial({
        color: plane ? planeColour : colour, roughness: 0.75, metalness: 0.0,
        side: plane ? T.DoubleSide : T.FrontSide,
        transparent: plane, opacity: plane ? 0.85 : 1
      });
      const mesh = new T.Mesh(g, mat);
      setPose(mesh, s.offset, 0);
      group.add(mesh);
      if (plane) {
        const grid = new T.GridHelper(s.size, 40, 0x9097a3, 0xbfc4cc);
        grid.rotation.x = Math.PI / 2; /* GridHelper lies in x-z */
        grid.position.z = 1e-4 * R;
        mesh.add(grid);
      } else {
        kinds.push(s.type);
        mesh.add(new T.LineSegments(new T.EdgesGeometry(g, 30),
          new T.LineBasicMaterial({ color: 0x30343b, transparent: true, opacity: 0.5 })));
      }
    }
    if (b.pose) setPose(group, b.pose, 0);
    else moving.push([group, b.moving]);
    objects[b.name] = group;
    scene.add(group);
    if (kinds.length) {
      const row = el('div', {}, legend);
      const sw = el('span', { class: 'sw' }, row);
      sw.style.background = '#' + colour.toString(16).padStart(6, '0');
      row.appendChild(document.createTextNode(b.name + ' (' + kinds.join(', ') + ')'));
    }
  }

  /* Contacts: a pool of point markers and force arrows, reused per frame. */
  const markerGeo = new T.SphereGeometry(data.view.markerSize, 12, 8);
  /* Contacts and forces are drawn through the bodies (no depth test): most
   * lie on or inside a body's surface. */
  const markerMat = new T.MeshBasicMaterial({ color: 0xd62728, depthTest: false });
  const markers = [], arrows = [];
  const contactGroup = new T.Group(), forceGroup = new T.Group();
  scene.add(contactGroup, forceGroup);
  const dir = new T.Vector3(), origin = new T.Vector3();
  function showContactsOf(i) {
    const c = data.contacts[i];
    const n = c.length / 9;
    while (markers.length < n) {
      const m = new T.Mesh(markerGeo, markerMat);
      markers.push(m);
      contactGroup.add(m);
      const a = new T.ArrowHelper(new T.Vector3(0, 0, 1), new T.Vector3(), 1, 0x1f3b73);
      a.line.material.depthTest = false;
      a.cone.material.depthTest = false;
      a.renderOrder = m.renderOrder = 10;
      arrows.push(a);
      forceGroup.add(a);
    }
    for (let k = 0; k < markers.length; ++k) {
      const on = k < n;
      markers[k].visible = on;
      arrows[k].visible = false;
      if (!on) continue;
      origin.set(c[9 * k], c[9 * k + 1], c[9 * k + 2]);
      markers[k].position.copy(origin);
      dir.set(c[9 * k + 6], c[9 * k + 7], c[9 * k + 8]);
      const len = dir.length() * data.view.forceScale;
      if (len > 1e-3 * R) {
        arrows[k].position.copy(origin);
        arrows[k].setDirection(dir.normalize());
        arrows[k].setLength(len, Math.min(0.25 * len, 0.06 * R), Math.min(0.12 * len, 0.03 * R));
        arrows[k].visible = true;
      }
    }
  }

  let goalMesh = null;
  if (data.goal) {
    goalMesh = new T.Group();
    const gg = new T.SphereGeometry(data.goal.tolerance, 32, 16);
    goalMesh.add(new T.Mesh(gg, new T.MeshBasicMaterial({ color: 0x2ca02c, transparent: true, opacity: 0.2, depthWrite: false })));
    goalMesh.add(new T.LineSegments(new T.WireframeGeometry(gg), new T.LineBasicMaterial({ color: 0x2ca02c, transparent: true, opacity: 0.35 })));
    goalMesh.position.fromArray(data.goal.centre);
    scene.add(goalMesh);
    const row = el('div', {}, legend);
    const sw = el('span', { class: 'sw' }, row);
    sw.style.background = '#2ca02c';
    row.appendChild(document.createTextNode('goal: ' + data.goal.body + ' within ' +
      data.goal.tolerance + ' m of [' + data.goal.centre.join(', ') + ']'));
  }

  let treeGroup = null;
  if (data.tree) {
    const t = data.tree;
    treeGroup = new T.Group();
    const pts = new T.BufferGeometry();
    pts.setAttribute('position', new T.Float32BufferAttribute(t.points, 3));
    treeGroup.add(new T.Points(pts, new T.PointsMaterial({ color: 0x555b66, size: 3, sizeAttenuation: false })));
    const idx = [];
    for (let i = 0; i < t.parent.length; ++i) if (t.parent[i] >= 0) idx.push(t.parent[i], i);
    const edges = pts.clone();
    edges.setIndex(idx);
    treeGroup.add(new T.LineSegments(edges, new T.LineBasicMaterial({ color: 0x8d93a0, transparent: true, opacity: 0.6 })));
    if (t.path.length) {
      const p = [];
      for (const i of t.path) p.push(t.points[3 * i], t.points[3 * i + 1], t.points[3 * i + 2]);
      const pg = new T.BufferGeometry();
      pg.setAttribute('position', new T.Float32BufferAttribute(p, 3));
      treeGroup.add(new T.Line(pg, new T.LineBasicMaterial({ color: 0xd62728 })));
      treeGroup.add(new T.Points(pg, new T.PointsMaterial({ color: 0xd62728, size: 6, sizeAttenuation: false })));
    }
    scene.add(treeGroup);
    const row = el('div', {}, legend);
    row.appendChild(document.createTextNode('tree: ' + t.parent.length + ' nodes, plan of ' + t.path.length + ' (red)'));
  }

  /* ---- frames and playback -------------------------------------------- */
  let frame = 0, playing = false, simTime = N ? data.time[0] : 0, last = null;

  function render() {
    if (renderer) renderer.render(scene, camera);
  }

  /* Notes and hidden bodies from a frame on (cp_viewer_note, cp_viewer_show). */
  const notes = data.notes || [], toggles = data.visibility || [];
  function noteAt(i) {
    let text = '';
    for (const [f, t] of notes) if (f <= i) text = t;
    return text;
  }
  function applyVisibility(i) {
    const vis = {};
    for (const [f, e, v] of toggles) if (f <= i) vis[e] = v;
    data.bodies.forEach((b, e) => { if (e in vis) objects[b.name].visible = vis[e] === 1; });
  }

  function show(i) {
    frame = i;
    if (notes.length) noteBox.textContent = noteAt(i);
    if (toggles.length) applyVisibility(i);
    const P = data.poses[i];
    for (const [obj, k] of moving) setPose(obj, P, 7 * k);
    showContactsOf(i);
    slider.value = String(i);
    timeLabel.textContent = 't = ' + data.time[i].toFixed(3) + ' s  (' + (i + 1) + '/' + N + ')';
  }

  /* The last frame whose time is <= t. */
  function frameAt(t) {
    let lo = 0, hi = N - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (data.time[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  function setPlaying(on) {
    if (on && frame >= N - 1) { simTime = data.time[0]; show(0); }
    playing = on && N > 1;
    last = null;
    playBtn.textContent = playing ? 'Pause' : 'Play';
  }

  function seek(i) {
    if (!Number.isInteger(i) || i < 0 || i >= N)
      throw new RangeError('complan.seek: frame ' + i + ' is not in 0..' + (N - 1));
    setPlaying(false);
    simTime = data.time[i];
    show(i);
    render();
  }

  function bodyPose(name) {
    const o = objects[name];
    if (!o) return null;
    const p = o.position, q = o.quaternion;
    return { position: [p.x, p.y, p.z], orientation: [q.w, q.x, q.y, q.z] };
  }

  function tick(now) {
    requestAnimationFrame(tick);
    if (playing) {
      if (last !== null) simTime += (now - last) / 1000 * Number(speedSel.value);
      last = now;
      if (simTime >= data.time[N - 1]) {
        simTime = data.time[N - 1];
        setPlaying(false);
      }
      const i = frameAt(simTime);
      if (i !== frame) show(i);
    }
    if (controls) controls.update();
    render();
  }

  function resize() {
    const w = viewDiv.clientWidth || 1, h = viewDiv.clientHeight || 1;
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
    if (renderer) renderer.setSize(w, h);
    render();
  }

  playBtn.addEventListener('click', () => setPlaying(!playing));
  slider.addEventListener('input', () => seek(Number(slider.value)));
  contactGroup.visible = showContacts.checked;
  forceGroup.visible = showForces.checked;
  showContacts.addEventListener('change', () => { contactGroup.visible = showContacts.checked; render(); });
  showForces.addEventListener('change', () => { forceGroup.visible = showForces.checked; render(); });
  if (showGoal) showGoal.addEventListener('change', () => { goalMesh.visible = showGoal.checked; render(); });
  if (showTree) showTree.addEventListener('change', () => { treeGroup.visible = showTree.checked; render(); });
  window.addEventListener('keydown', (ev) => {
    if (ev.target && ev.target.tagName === 'SELECT') return;
    if (ev.key === ' ') { setPlaying(!playing); ev.preventDefault(); }
    else if (ev.key === 'ArrowRight' && frame < N - 1) seek(frame + 1);
    else if (ev.key === 'ArrowLeft' && frame > 0) seek(frame - 1);
  });
  window.addEventListener('resize', resize);

  window.complan = {
    frames: N,
    time: data.time,
    bodies: data.bodies.map((b) => b.name),
    seek: seek,
    bodyPose: bodyPose,
    get frame() { return frame; },
    get note() { return noteAt(frame); },
    noteAt: (i) => noteAt(i),
    visible: (name) => (objects[name] ? objects[name].visible : null),
    play: () => setPlaying(true),
    pause: () => setPlaying(false)
  };

  show(0);
  resize();
  requestAnimationFrame(tick);
})();
