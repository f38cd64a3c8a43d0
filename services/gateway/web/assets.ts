/**
 * The pages' one stylesheet, one progressive-enhancement script and the site icon, served from memory (so the
 * compiled image needs no asset files). Pages work without the script: it only turns <time>
 * elements into the visitor's local time and adds "Copy" buttons to snippets.
 */
export const SITE_CSS = `
:root { --fg: #1b1f24; --muted: #59636e; --line: #d0d7de; --bg: #fff; --soft: #f6f8fa; --accent: #0b5cad; --ok: #1a7f37; --warn: #9a6700; --bad: #b42318; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, pre:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
.wrap { max-width: 64rem; margin: 0 auto; padding: 0 1rem; }
header.site { border-bottom: 1px solid var(--line); background: var(--soft); }
header.site .wrap { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding-top: .6rem; padding-bottom: .6rem; }
header.site .brand { font-weight: 700; color: var(--fg); text-decoration: none; font-size: 1.1rem; }
header.site nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
main.wrap { padding-top: 1.25rem; padding-bottom: 3rem; }
footer.site { border-top: 1px solid var(--line); color: var(--muted); font-size: .9rem; padding: 1rem 0 2rem; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: .2rem 0 .8rem; }
h2 { font-size: 1.25rem; margin: 1.8rem 0 .6rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .4rem; }
.lead { font-size: 1.1rem; max-width: 46rem; }
.muted { color: var(--muted); }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: .75rem; margin: 1rem 0; padding: 0; list-style: none; }
.figures li { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
.figures .n { display: block; font-size: 1.6rem; font-weight: 700; }
.cats { display: flex; flex-wrap: wrap; gap: .4rem; padding: 0; list-style: none; }
.cats a { display: inline-block; border: 1px solid var(--line); border-radius: 999px; padding: .15rem .7rem; text-decoration: none; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow-x: auto; font-size: .85rem; white-space: pre; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre code { user-select: all; }
.snippet { margin-bottom: 1rem; }
.snippet pre { margin: 0; }
.snippet button.copy { display: block; margin: 0 0 .3rem auto; font-size: .8rem; padding: .15rem .6rem; }
form.search { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin: 0 0 1rem; }
form.search label { display: flex; flex-direction: column; font-size: .9rem; color: var(--muted); }
input, select, textarea { font: inherit; padding: .45rem .6rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: var(--fg); max-width: 100%; }
input[type=search] { min-width: 14rem; }
button, .button { font: inherit; padding: .5rem 1.1rem; border-radius: 6px; border: 1px solid #6e7781; background: #fff; color: var(--fg); cursor: pointer; text-decoration: none; display: inline-block; }
button.primary, .button.primary { background: var(--ok); border-color: var(--ok); color: #fff; }
button.danger { background: #fff; border-color: var(--bad); color: var(--bad); }
.results { list-style: none; padding: 0; margin: 0; }
.result { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin-bottom: .75rem; }
.result h2 { margin: 0 0 .3rem; font-size: 1.1rem; }
.result .excerpt { margin: .2rem 0; }
.meta { display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: .9rem; color: var(--muted); margin: .3rem 0 0; padding: 0; list-style: none; }
.price { font-weight: 700; color: var(--fg); }
.badge { display: inline-block; border-radius: 4px; padding: 0 .4rem; font-size: .8rem; font-weight: 600; border: 1px solid; }
.badge.seed { color: var(--ok); border-color: var(--ok); }
.badge.new { color: var(--warn); border-color: var(--warn); }
.badge.bad { color: var(--bad); border-color: var(--bad); }
.pager { display: flex; gap: 1rem; margin-top: 1rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: .5rem 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
dl.facts dd .muted { font-weight: 400; font-size: .9rem; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 1.25rem; margin-bottom: 1rem; }
.card > h2:first-child, .card > h3:first-child { margin-top: 0; }
.narrow { max-width: 36rem; }
.notice { border-radius: 6px; padding: .6rem .8rem; margin: 0 0 1rem; border: 1px solid; }
.notice.sandbox, .notice.warn { background: #fff8c5; border-color: #d4a72c; }
.notice.ok { background: #dafbe1; border-color: #4ac26b; }
.notice.error { background: #ffebe9; border-color: #ff8182; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
.actions form { margin: 0; }
.description { white-space: pre-wrap; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; vertical-align: top; padding: .4rem .5rem; border-bottom: 1px solid var(--line); }
.table-scroll { overflow-x: auto; }
form.inline { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin: .3rem 0; }
form.stack { display: flex; flex-direction: column; gap: .6rem; max-width: 36rem; }
form.stack label { display: flex; flex-direction: column; gap: .2rem; }
form.stack label.inline { flex-direction: row; align-items: center; gap: .5rem; }
fieldset fieldset { display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
fieldset fieldset legend { width: 100%; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 40rem) {
  h1 { font-size: 1.4rem; }
  .figures { grid-template-columns: repeat(3, 1fr); gap: .4rem; }
  .figures li { padding: .5rem; font-size: .85rem; }
  .figures .n { font-size: 1.3rem; }
  input[type=search] { min-width: 0; width: 100%; }
  form.search label { flex: 1 1 100%; }
  td { overflow-wrap: anywhere; }
}
`;

export const SITE_JS = `(function () {
  var fmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  document.querySelectorAll('time[data-local]').forEach(function (t) {
    var d = new Date(t.getAttribute('datetime'));
    if (!isNaN(d.getTime())) { t.textContent = fmt.format(d) + ' (your time)'; }
  });
  if (!navigator.clipboard) return;
  document.querySelectorAll('.snippet').forEach(function (box) {
    var code = box.querySelector('code');
    if (!code) return;
    var b = document.createElement('button');
    var pre = box.querySelector('pre');
    b.type = 'button'; b.className = 'copy'; b.textContent = 'Copy';
    b.setAttribute('aria-label', 'Copy: ' + ((pre && pre.getAttribute('aria-label')) || 'snippet'));
    b.addEventListener('click', function () {
      navigator.clipboard.writeText(code.textContent || '').then(function () { b.textContent = 'Copied'; });
    });
    box.insertBefore(b, box.firstChild);
  });
})();
`;

/** The site icon: a gas drop on the accent colour, as SVG (every current browser takes an SVG favicon). */
export const SITE_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#0b5cad"/>
<path d="M16 5c4.5 6 8 10.2 8 14.2A8 8 0 0 1 8 19.2C8 15.2 11.5 11 16 5z" fill="#fff"/>
</svg>
`;
