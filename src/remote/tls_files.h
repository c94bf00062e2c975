// Mutual TLS material for the runner-host protocol, read from PEM files.
//
// Both ends present a certificate and check the peer's against one CA:
//  - the runner host (server) requires and verifies a client certificate
//    (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY), so a
//    gateway without one, or with one from another CA, never completes the
//    handshake;
//  - the gateway (client) verifies the runner host's certificate against the
//    CA and the expected name (server_name, or the address's host).
// Files are read once, at start; errors name the file.
//
//   AIRLOCK_ASSIGN_OR_RETURN(TlsFiles tls, ReadTlsFiles(ca, cert, key));
//   builder.AddListeningPort(addr, ServerCredentials(tls));
#ifndef AIRLOCK_REMOTE_TLS_FILES_H_
#define AIRLOCK_REMOTE_TLS_FILES_H_

#include <memory>
#include <string>

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include "base/status.h"

namespace airlock::remote {

struct TlsFiles {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
};

// Reads the three PEM files. InvalidArgument if a path is empty or a file
// holds no PEM block; NotFound / PermissionDenied as the file system says.
StatusOr<TlsFiles> ReadTlsFiles(const std::string& ca_file, const std::string& cert_file,
                                const std::string& key_file);

// The runner host's credentials: its certificate, and client certificates
// required and verified against the CA.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TlsFiles& tls);

// The gateway's credentials: its client certificate, and the runner host's
// verified against the CA.
std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const TlsFiles& tls);

// The peer certificate's common name as the server's TLS layer verified it
// ("" if none); for logs.
std::string PeerCommonName(const grpc::AuthContext& auth);

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_TLS_FILES_H_
