// The HTTP front's own TLS (config server.http.tls, docs/security.md):
// a server SSL_CTX built from a certificate chain and a private key in PEM
// files, TLS 1.2 or newer only, and a holder that swaps it on reload.
//
//   StatusOr<std::shared_ptr<TlsCredentials>> tls = TlsCredentials::Load(settings);
//   SSL* ssl = SSL_new((*tls)->Current()->get());   // one per connection
//   ...
//   Status st = (*tls)->Reload();  // SIGHUP: new connections get the new files
//
// TLS 1.2 is offered with ECDHE key exchange and AEAD ciphers only
// (AES-GCM, ChaCha20-Poly1305); TLS 1.3 with OpenSSL's default suites.
// Compression, renegotiation and session tickets are off.
#ifndef AIRLOCK_MCP_TLS_CONTEXT_H_
#define AIRLOCK_MCP_TLS_CONTEXT_H_

#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace airlock::mcp {

struct TlsSettings {
  std::string cert_file;  // PEM: the certificate, then any intermediates
  std::string key_file;   // PEM: its private key (unencrypted)
  std::string min_version = "1.2";  // "1.2" or "1.3"
};

// The TLS 1.2 cipher list: ECDHE with AES-GCM or ChaCha20-Poly1305.
extern const char kTls12Ciphers[];

// One loaded certificate and key (an SSL_CTX, freed with this). Immutable
// once loaded; connections started from it keep it alive (SSL_CTX is
// reference-counted), so a swapped-out context stays valid for them.
class TlsContext {
 public:
  static StatusOr<std::shared_ptr<const TlsContext>> Load(const TlsSettings& settings);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* get() const { return ctx_; }
  // "subject CN=..., serial 0A1B..., expires 2027-01-01 00:00:00Z" for logs.
  const std::string& description() const { return description_; }

 private:
  TlsContext(SSL_CTX* ctx, std::string description) : ctx_(ctx), description_(std::move(description)) {}
  SSL_CTX* const ctx_;
  const std::string description_;
};

// The context in force, replaced by Reload(). Thread-safe.
class TlsCredentials {
 public:
  static StatusOr<std::shared_ptr<TlsCredentials>> Load(TlsSettings settings);

  std::shared_ptr<const TlsContext> Current() const;
  // Re-reads the same files. On an error (unreadable, malformed, key not
  // matching the certificate) the current context stays and the error is
  // returned.
  Status Reload();
  const TlsSettings& settings() const { return settings_; }

 private:
  TlsCredentials(TlsSettings settings, std::shared_ptr<const TlsContext> ctx)
      : settings_(std::move(settings)), current_(std::move(ctx)) {}
  const TlsSettings settings_;
  mutable std::mutex mu_;
  std::shared_ptr<const TlsContext> current_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TLS_CONTEXT_H_
