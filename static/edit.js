// The approval page's command edit: as the person types, shows their command against the one
// the agent asked, word by word (removed struck through, added underlined), so that what
// Allow runs is in front of them before they press it. The same diff as the server's
// (src/render/edit_diff.rs); text is only ever set as text.
(() => {
  const box = document.getElementById("command");
  const preview = document.getElementById("edit-preview");
  const out = document.getElementById("edit-diff");
  if (!box || !preview || !out) return;
  const asked = (box.dataset.asked || "").trim();
  const MAX_CELLS = 4000000;
  const words = (s) => s.match(/\s+|\S+/g) || [];
  const diff = (a, b) => {
    const pieces = [];
    const push = (cls, text) => {
      const last = pieces[pieces.length - 1];
      if (last && last.cls === cls) last.text += text;
      else pieces.push({ cls, text });
    };
    if (a.length * b.length > MAX_CELLS) {
      push("del", a.join(""));
      push("add", b.join(""));
      return pieces;
    }
    const n = a.length, m = b.length, w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1
          : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) { push("", a[i]); i++; j++; }
      else if (i < n && (j === m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) { push("del", a[i]); i++; }
      else { push("add", b[j]); j++; }
    }
    return pieces;
  };
  const show = () => {
    const edited = box.value.trim();
    if (!edited || edited === asked) {
      preview.hidden = true;
      out.replaceChildren();
      return;
    }
    const nodes = diff(words(asked), words(edited)).map((p) => {
      if (!p.cls) return document.createTextNode(p.text);
      const el = document.createElement(p.cls === "del" ? "del" : "ins");
      el.textContent = p.text;
      return el;
    });
    out.replaceChildren(...nodes);
    preview.hidden = false;
  };
  box.addEventListener("input", show);
  show();
})();
