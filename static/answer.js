// Sends a question's ticked boxes in the order they were ticked, not in page order: some ask
// tools (oh-my-pi's) return a multi-select answer in that order. Each tick is stamped; on
// submit, the ticked boxes of a group go as hidden inputs in stamp order (unstamped ones, ticked
// before the page loaded, first in page order).
(() => {
  let clock = 0;
  document.addEventListener("change", (e) => {
    const box = e.target;
    if (box instanceof HTMLInputElement && box.type === "checkbox" && box.checked) {
      clock += 1;
      box.dataset.tickedAt = String(clock);
    }
  });
  const form = document.getElementById("answer");
  if (!form) return;
  const added = [];
  form.addEventListener("submit", () => {
    const groups = new Map();
    for (const box of form.querySelectorAll("input[type=checkbox]:checked")) {
      if (!box.name) continue;
      if (!groups.has(box.name)) groups.set(box.name, []);
      groups.get(box.name).push(box);
    }
    for (const [name, boxes] of groups) {
      if (boxes.length < 2) continue;
      const stamp = (b) => Number(b.dataset.tickedAt || 0);
      boxes.sort((a, b) => stamp(a) - stamp(b));
      for (const box of boxes) {
        const hidden = document.createElement("input");
        hidden.type = "hidden";
        hidden.name = name;
        hidden.value = box.value;
        form.appendChild(hidden);
        added.push(hidden);
        box.disabled = true;
      }
    }
  });
  // Back to a page kept in memory: the boxes as they were, nothing sent twice.
  window.addEventListener("pageshow", () => {
    for (const hidden of added.splice(0)) hidden.remove();
    for (const box of form.querySelectorAll("input[type=checkbox]:disabled")) box.disabled = false;
  });
})();
