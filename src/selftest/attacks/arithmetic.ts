// Allowed: plain computation (type annotations are stripped).
function sum(n: number): number {
  let s: number = 0;
  for (let i = 0; i < n; i++) s += i;
  return s;
}
const s: number = sum(1000000);
console.log((s === 499999500000 ? 'OK: ' : 'FAIL: ') + s);
