// Attack: TCP connection to 127.0.0.1:@TCP_PORT@, where the suite listens on the host.
const net = require('net');
const s = net.connect({host: '127.0.0.1', port: @TCP_PORT@});
const timer = setTimeout(() => { console.log('DENIED: connect timed out'); process.exit(0); }, 3000);
s.on('connect', () => { console.log('ALLOWED: connected to 127.0.0.1:@TCP_PORT@'); process.exit(0); });
s.on('error', (e) => { clearTimeout(timer); console.log('DENIED: connect(127.0.0.1:@TCP_PORT@): ' + e.code); });
