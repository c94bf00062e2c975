// Allowed: plain computation.
let s = 0;
for (let i = 0; i < 1000000; i++) s += i;
console.log((s === 499999500000 ? 'OK: ' : 'FAIL: ') + s);
