# Allowed: plain computation.
s = (0...1_000_000).sum
puts "#{s == 499_999_500_000 ? 'OK' : 'FAIL'}: #{s}"
