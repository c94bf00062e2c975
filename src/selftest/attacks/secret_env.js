// Attack: read the secret variable @SECRET_ENV_NAME@ set in the supervisor's
// environment; the whole environment is printed too.
for (const [k, v] of Object.entries(process.env)) console.log('env: ' + k + '=' + v);
if ('@SECRET_ENV_NAME@' in process.env) console.log('ALLOWED: @SECRET_ENV_NAME@=' + process.env['@SECRET_ENV_NAME@']);
else console.log('DENIED: @SECRET_ENV_NAME@ is not set');
