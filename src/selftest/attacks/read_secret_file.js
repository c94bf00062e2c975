// Attack: read the file the suite planted on the host (outside the jail).
const fs = require('fs');
let allowed = false;
for (const p of ['@SECRET_PATH@', '/proc/@HOST_PID@/root@SECRET_PATH@', '/proc/1/root@SECRET_PATH@']) {
  try {
    console.log('ALLOWED: read ' + p + ': ' + fs.readFileSync(p, 'utf8'));
    allowed = true;
  } catch (e) {
    console.log(p + ': ' + e.code);
  }
}
if (!allowed) console.log('DENIED: the secret file is not reachable');
