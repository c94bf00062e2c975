# Attack: read the secret variable @SECRET_ENV_NAME@ set in the supervisor's
# environment; the whole environment is printed too.
ENV.each { |k, v| puts "env: #{k}=#{v}" }
if ENV.key?('@SECRET_ENV_NAME@')
  puts "ALLOWED: @SECRET_ENV_NAME@=#{ENV['@SECRET_ENV_NAME@']}"
else
  puts 'DENIED: @SECRET_ENV_NAME@ is not set'
end
