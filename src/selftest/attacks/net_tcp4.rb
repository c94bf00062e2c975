# Attack: TCP connection to 127.0.0.1:@TCP_PORT@, where the suite listens on the host.
require 'socket'
begin
  TCPSocket.new('127.0.0.1', @TCP_PORT@, connect_timeout: 3)
  puts 'ALLOWED: connected to 127.0.0.1:@TCP_PORT@'
rescue SystemCallError, IOError, SocketError => e
  puts "DENIED: connect(127.0.0.1:@TCP_PORT@): #{e.class}: #{e.message}"
end
