# Allowed: an uncaught exception comes back as a result with the backtrace.
puts 'before'
1 / 0
