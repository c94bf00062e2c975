// Allowed: an uncaught exception comes back as a result with the stack.
console.log('before');
null.boom();
