#include "mcp/tls_context.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <ctime>

namespace airlock::mcp {

const char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

namespace {

// OpenSSL's queued errors as one line (and the queue emptied).
std::string OpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "unknown error" : out;
}

std::string Describe(X509* cert) {
  std::string out = "subject ";
  char name[512] = {};
  X509_NAME_oneline(X509_get_subject_name(cert), name, sizeof name);
  out += name;
  if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(bn)) {
      out += ", serial " + std::string(hex);
      OPENSSL_free(hex);
    }
    BN_free(bn);
  }
  tm t{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &t) == 1) {
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%SZ", &t);
    out += ", expires " + std::string(when);
  }
  return out;
}

struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};

}  // namespace

StatusOr<std::shared_ptr<const TlsContext>> TlsContext::Load(const TlsSettings& s) {
  const std::string where = "TLS (server.http.tls): ";
  if (s.cert_file.empty() || s.key_file.empty()) return InvalidArgument(where + "cert_file and key_file are required");
  if (s.min_version != "1.2" && s.min_version != "1.3") {
    return InvalidArgument(where + "min_version: expected \"1.2\" or \"1.3\"");
  }
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return Internal(where + "SSL_CTX_new: " + OpenSslErrors());
  SSL_CTX_set_min_proto_version(ctx.get(), s.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                     SSL_OP_NO_TICKET);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx.get(), 0);  // no TLS 1.3 tickets either: nothing to resume
  if (SSL_CTX_set_cipher_list(ctx.get(), kTls12Ciphers) != 1) {
    return Internal(where + "cipher list: " + OpenSslErrors());
  }
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), s.cert_file.c_str()) != 1) {
    return InvalidArgument(where + "cannot load the certificate " + s.cert_file + ": " + OpenSslErrors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), s.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return InvalidArgument(where + "the private key " + s.key_file + " does not match the certificate " +
                             s.cert_file);
    }
    return InvalidArgument(where + "cannot load the private key " + s.key_file + ": " + OpenSslErrors());
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    return InvalidArgument(where + "the private key " + s.key_file + " does not match the certificate " +
                           s.cert_file);
  }
  std::string description = Describe(SSL_CTX_get0_certificate(ctx.get()));
  return std::shared_ptr<const TlsContext>(new TlsContext(ctx.release(), std::move(description)));
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

StatusOr<std::shared_ptr<TlsCredentials>> TlsCredentials::Load(TlsSettings settings) {
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> ctx, TlsContext::Load(settings));
  return std::shared_ptr<TlsCredentials>(new TlsCredentials(std::move(settings), std::move(ctx)));
}

std::shared_ptr<const TlsContext> TlsCredentials::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

Status TlsCredentials::Reload() {
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> ctx, TlsContext::Load(settings_));
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(ctx);
  return OkStatus();
}

}  // namespace airlock::mcp
