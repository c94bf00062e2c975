#include "remote/tls_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <grpcpp/security/auth_context.h>

namespace airlock::remote {
namespace {

StatusOr<std::string> ReadPem(const std::string& path, const char* what) {
  if (path.empty()) return InvalidArgument(std::string("no ") + what + " file given");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string msg = std::string(what) + " " + path + ": " + std::strerror(err);
    if (err == ENOENT) return NotFound(msg);
    if (err == EACCES) return PermissionDenied(msg);
    return InvalidArgument(msg);
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string pem = text.str();
  if (pem.find("-----BEGIN ") == std::string::npos) {
    return InvalidArgument(std::string(what) + " " + path + ": no PEM block in the file");
  }
  return pem;
}

}  // namespace

StatusOr<TlsFiles> ReadTlsFiles(const std::string& ca_file, const std::string& cert_file,
                                const std::string& key_file) {
  TlsFiles tls;
  AIRLOCK_ASSIGN_OR_RETURN(tls.ca_pem, ReadPem(ca_file, "CA certificate"));
  AIRLOCK_ASSIGN_OR_RETURN(tls.cert_pem, ReadPem(cert_file, "certificate"));
  AIRLOCK_ASSIGN_OR_RETURN(tls.key_pem, ReadPem(key_file, "private key"));
  return tls;
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TlsFiles& tls) {
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca_pem;
  options.pem_key_cert_pairs.push_back({tls.key_pem, tls.cert_pem});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(const TlsFiles& tls) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls.ca_pem;
  options.pem_private_key = tls.key_pem;
  options.pem_cert_chain = tls.cert_pem;
  return grpc::SslCredentials(options);
}

std::string PeerCommonName(const grpc::AuthContext& auth) {
  for (const auto& value : auth.FindPropertyValues("x509_common_name")) {
    return std::string(value.data(), value.size());
  }
  return "";
}

}  // namespace airlock::remote
