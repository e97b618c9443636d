// Generates projectdirs.jsonl: node projectdirs.js > projectdirs.jsonl
// The three functions are copied verbatim (minified names kept) from the
// Claude Code 2.1.197 binary, where $E names the folders under ~/.claude/projects.
function jCe(e){let t=0;for(let n=0;n<e.length;n++)t=(t<<5)-t+e.charCodeAt(n)|0;return t}
function fNu(e){return Math.abs(jCe(e)).toString(36)}
function $E(e){let t=e.replace(/[^a-zA-Z0-9]/g,"-");if(t.length<=200)return t;return`${t.slice(0,200)}-${fNu(e)}`}
const cases = ["/home/dev/proj", "/home/dev/my project.v2", "/tmp/ünïcödé/😀", "/" + "a".repeat(250), "/home/dev/" + "deep/".repeat(50) + "end", "/x/" + "é".repeat(210) + "😀", ""];
for (const c of cases) console.log(JSON.stringify([c, $E(c)]));
