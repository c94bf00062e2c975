// Allowed: a syntax error comes back as a result with the message.
function broken( {
