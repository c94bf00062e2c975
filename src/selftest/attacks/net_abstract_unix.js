// Attack: connect to the abstract AF_UNIX socket "@ABSTRACT_SOCKET@" that the
// suite listens on in the host's network namespace.
const net = require('net');
const s = net.connect({path: '\0@ABSTRACT_SOCKET@'});
const timer = setTimeout(() => { console.log('DENIED: connect timed out'); process.exit(0); }, 3000);
s.on('connect', () => { console.log('ALLOWED: connected to the host abstract socket'); process.exit(0); });
s.on('error', (e) => { clearTimeout(timer); console.log('DENIED: connect(@@ABSTRACT_SOCKET@): ' + e.code); });
