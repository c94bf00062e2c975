# Attack: read the file the suite planted on the host (outside the jail).
allowed = false
['@SECRET_PATH@', '/proc/@HOST_PID@/root@SECRET_PATH@', '/proc/1/root@SECRET_PATH@'].each do |p|
  begin
    puts "ALLOWED: read #{p}: #{File.read(p)}"
    allowed = true
  rescue SystemCallError, IOError => e
    puts "#{p}: #{e.class}"
  end
end
puts 'DENIED: the secret file is not reachable' unless allowed
