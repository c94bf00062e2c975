// The HTTP front's own HTTPS listener (server.http.tls): a self-signed
// certificate made here (OpenSSL API, temp dir), real TLS clients on
// 127.0.0.1. TLS 1.2 and 1.3 serve /healthz and MCP; TLS 1.0/1.1 and plain
// HTTP are refused without harm; handshakes that never finish hold no
// worker; a reload swaps the certificate for new connections and keeps the
// old one when the new files are broken. Also the config keys and the
// OAuth start-up check against a plain non-loopback listener.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "cli/serve_oauth.h"
#include "config/config.h"
#include "mcp/connection_lobby.h"
#include "mcp/http_transport.h"
#include "mcp/tls_connection.h"
#include "mcp/tls_context.h"
#include "mcp_http_test_util.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Writes a self-signed P-256 certificate (subject CN=`cn`, serial `serial`)
// and its key as PEM.
void MakeCert(const std::filesystem::path& cert, const std::filesystem::path& key, const std::string& cn,
              long serial) {
  EVP_PKEY* pkey = EVP_EC_gen("P-256");
  ASSERT_NE(pkey, nullptr);
  X509* x = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, pkey);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, name);
  ASSERT_GT(X509_sign(x, pkey, EVP_sha256()), 0);
  FILE* f = fopen(cert.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_X509(f, x);
  fclose(f);
  f = fopen(key.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_PrivateKey(f, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  fclose(f);
  X509_free(x);
  EVP_PKEY_free(pkey);
}

UniqueFd ConnectTcp(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  timeval tv{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

// A blocking TLS client connection (no certificate verification: the test
// reads the certificate instead), limited to [min_version, max_version].
class TlsClient {
 public:
  TlsClient(int port, int min_version, int max_version) : fd_(ConnectTcp(port)) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx_, min_version);
    SSL_CTX_set_max_proto_version(ctx_, max_version);
    // OpenSSL 3 offers TLS 1.0/1.1 only at security level 0.
    if (max_version < TLS1_2_VERSION) SSL_CTX_set_cipher_list(ctx_, "DEFAULT:@SECLEVEL=0");
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_.get());
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~TlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  bool connected() const { return connected_; }
  int version() const { return SSL_version(ssl_); }
  // The server certificate's serial number (hex) and subject.
  std::string serial() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return "";
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
    char* hex = BN_bn2hex(bn);
    char subject[256] = {};
    X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
    std::string out = std::string(hex) + " " + subject;
    OPENSSL_free(hex);
    BN_free(bn);
    X509_free(cert);
    return out;
  }
  // Sends a request and reads one response (its head, and a body of
  // Content-Length bytes); "" when the connection fails.
  std::string Exchange(const std::string& request) {
    if (SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0) return "";
    return ReadResponse();
  }
  // One response (bytes past it are kept for the next call).
  std::string ReadResponse() {
    char buf[4096];
    for (;;) {
      const size_t head_end = in_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t length = 0;
        const size_t cl = in_.find("Content-Length: ");
        if (cl != std::string::npos && cl < head_end) length = std::stoul(in_.substr(cl + 16));
        if (in_.size() >= head_end + 4 + length) {
          std::string out = in_.substr(0, head_end + 4 + length);
          in_.erase(0, out.size());
          return out;
        }
      }
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n <= 0) return std::exchange(in_, "");
      in_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  UniqueFd fd_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool connected_ = false;
  std::string in_;
};

std::string Post(const std::string& body, const std::string& session = "") {
  std::string r = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n"
                  "Content-Type: application/json\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\n";
  if (!session.empty()) r += "Mcp-Session-Id: " + session + "\r\nMCP-Protocol-Version: 2025-11-25\r\n";
  return r + "\r\n" + body;
}

std::string Body(const std::string& response) {
  const size_t p = response.find("\r\n\r\n");
  return p == std::string::npos ? "" : response.substr(p + 4);
}

std::string HeaderValue(const std::string& response, const std::string& name) {
  const size_t p = response.find(name + ": ");
  if (p == std::string::npos) return "";
  return response.substr(p + name.size() + 2, response.find("\r\n", p) - p - name.size() - 2);
}

const char kHealthz[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

class McpHttpTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("airlock-tls-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    cert_ = dir_ / "cert.pem";
    key_ = dir_ / "key.pem";
    MakeCert(cert_, key_, "airlock-one", 0x1111);
  }
  void TearDown() override {
    if (http_) http_->Stop();
    std::filesystem::remove_all(dir_);
  }
  void Start(int threads = 32) {
    StatusOr<std::shared_ptr<TlsCredentials>> tls =
        TlsCredentials::Load({.cert_file = cert_.string(), .key_file = key_.string()});
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    tls_ = *tls;
    HttpOptions o;
    o.threads = threads;
    o.tls = tls_;
    server_ = std::make_unique<McpServer>(config::DefaultConfig(), executor_);
    Status st = testing::StartTestHttpFront(*server_, std::move(o), &http_, &plain_client_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  bool HealthzOverTls(std::string* serial = nullptr) {
    TlsClient c(http_->port(), TLS1_2_VERSION, TLS1_3_VERSION);
    if (!c.connected()) return false;
    if (serial != nullptr) *serial = c.serial();
    return c.Exchange(kHealthz).rfind("HTTP/1.1 200", 0) == 0;
  }

  std::filesystem::path dir_, cert_, key_;
  testing::FakeExecutor executor_;
  std::unique_ptr<McpServer> server_;
  std::shared_ptr<TlsCredentials> tls_;
  std::unique_ptr<HttpTransport> http_;
  std::unique_ptr<httplib::Client> plain_client_;
};

// (a) TLS 1.2: /healthz, then initialize and tools/list on the same
// kept-alive connection (it goes back to the lobby between requests).
TEST_F(McpHttpTlsTest, Tls12ServesHealthzAndMcp) {
  Start();
  EXPECT_EQ(http_->url().rfind("https://127.0.0.1:", 0), 0u) << http_->url();
  TlsClient c(http_->port(), TLS1_2_VERSION, TLS1_2_VERSION);
  ASSERT_TRUE(c.connected());
  EXPECT_EQ(c.version(), TLS1_2_VERSION);
  std::string res = c.Exchange(kHealthz);
  EXPECT_EQ(res.rfind("HTTP/1.1 200", 0), 0u) << res;
  res = c.Exchange(Post(testing::InitializeRequest(1).dump()));
  ASSERT_EQ(res.rfind("HTTP/1.1 200", 0), 0u) << res;
  const std::string session = HeaderValue(res, "Mcp-Session-Id");
  ASSERT_EQ(session.size(), 32u) << res;
  EXPECT_EQ(json::parse(Body(res))["result"]["protocolVersion"], "2025-11-25");
  res = c.Exchange(Post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump(), session));
  EXPECT_EQ(res.rfind("HTTP/1.1 202", 0), 0u) << res;
  res = c.Exchange(Post(testing::Request(2, "tools/list").dump(), session));
  ASSERT_EQ(res.rfind("HTTP/1.1 200", 0), 0u) << res;
  EXPECT_EQ(json::parse(Body(res))["result"]["tools"][0]["name"], "run_code");
}

// Pipelined requests in one TLS record: the second is decrypted along with
// the first (into the connection's read-ahead, where no socket event
// announces it) and still answered once the first is.
TEST_F(McpHttpTlsTest, PipelinedRequestsAreAnswered) {
  Start();
  TlsClient c(http_->port(), TLS1_2_VERSION, TLS1_3_VERSION);
  ASSERT_TRUE(c.connected());
  const std::string three = std::string(kHealthz) + kHealthz + kHealthz;
  std::string res = c.Exchange(three);
  EXPECT_EQ(res.rfind("HTTP/1.1 200", 0), 0u) << res;
  for (int i = 0; i < 2; ++i) {
    res = c.ReadResponse();
    EXPECT_EQ(res.rfind("HTTP/1.1 200", 0), 0u) << i << ": " << res;
  }
}

// TLS 1.3 (OpenSSL's defaults), through cpp-httplib's own HTTPS client.
TEST_F(McpHttpTlsTest, Tls13WithHttplibClient) {
  Start();
  httplib::SSLClient client("127.0.0.1", http_->port());
  client.enable_server_certificate_verification(false);
  client.set_read_timeout(10);
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  res = client.Post("/mcp", {{"Accept", "application/json, text/event-stream"}},
                    testing::InitializeRequest(1).dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  TlsClient c(http_->port(), TLS1_3_VERSION, TLS1_3_VERSION);
  ASSERT_TRUE(c.connected());
  EXPECT_EQ(c.version(), TLS1_3_VERSION);
}

// (b) TLS 1.0 and 1.1 are refused; the server goes on.
TEST_F(McpHttpTlsTest, OldTlsVersionsAreRefused) {
  Start();
  for (int v : {TLS1_VERSION, TLS1_1_VERSION}) {
    TlsClient c(http_->port(), v, v);
    EXPECT_FALSE(c.connected()) << std::hex << v;
  }
  EXPECT_TRUE(HealthzOverTls());
}

// (c) Plain HTTP to the TLS port: the connection is closed, no answer in
// clear text, and the server stays up.
TEST_F(McpHttpTlsTest, PlainHttpIsClosedCleanly) {
  Start();
  UniqueFd fd = ConnectTcp(http_->port());
  ASSERT_EQ(send(fd.get(), kHealthz, sizeof kHealthz - 1, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof kHealthz - 1));
  std::string got;
  char buf[1024];
  for (;;) {
    const ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n <= 0) {
      EXPECT_TRUE(n == 0 || errno == ECONNRESET) << strerror(errno);  // closed, not timed out
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(got.find("HTTP/1.1"), std::string::npos) << got;
  auto res = plain_client_->Get("/healthz");  // httplib's plain client: fails too
  EXPECT_FALSE(res && res->status == 200);
  EXPECT_TRUE(HealthzOverTls());
}

// (d) Clients that connect and never finish the handshake (nothing sent,
// or half a ClientHello) wait in the lobby, not on workers: with 4
// workers and 20 such connections, /healthz still answers at once.
TEST_F(McpHttpTlsTest, StalledHandshakesHoldNoWorker) {
  Start(/*threads=*/4);
  std::vector<UniqueFd> stalled;
  for (int i = 0; i < 20; ++i) {
    stalled.push_back(ConnectTcp(http_->port()));
    if (i % 2 == 1) {
      const unsigned char partial[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00};  // a ClientHello's start
      ASSERT_EQ(send(stalled.back().get(), partial, sizeof partial, MSG_NOSIGNAL),
                static_cast<ssize_t>(sizeof partial));
    }
  }
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(HealthzOverTls());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  // The stalled ones are still open (in the lobby, until the header deadline).
  pollfd p{stalled[0].get(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
}

// (e) Reload: new connections get the new certificate; broken files keep
// the one in force.
TEST_F(McpHttpTlsTest, ReloadSwapsCertificateAndKeepsItOnError) {
  Start();
  std::string seen;
  ASSERT_TRUE(HealthzOverTls(&seen));
  EXPECT_EQ(seen, "1111 /CN=airlock-one");
  EXPECT_NE(tls_->Current()->description().find("serial 1111"), std::string::npos) << tls_->Current()->description();
  // An open connection keeps working across the reload.
  TlsClient open(http_->port(), TLS1_2_VERSION, TLS1_3_VERSION);
  ASSERT_TRUE(open.connected());

  MakeCert(cert_, key_, "airlock-two", 0x2222);
  ASSERT_TRUE(tls_->Reload().ok());
  ASSERT_TRUE(HealthzOverTls(&seen));
  EXPECT_EQ(seen, "2222 /CN=airlock-two");
  EXPECT_EQ(open.Exchange(kHealthz).rfind("HTTP/1.1 200", 0), 0u);

  // A broken certificate, then a key of another certificate: both refused,
  // the second certificate stays.
  std::ofstream(cert_) << "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n";
  Status st = tls_->Reload();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("certificate"), std::string::npos) << st.message();
  MakeCert(cert_, dir_ / "other-key.pem", "airlock-three", 0x3333);
  st = tls_->Reload();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("does not match"), std::string::npos) << st.message();
  ASSERT_TRUE(HealthzOverTls(&seen));
  EXPECT_EQ(seen, "2222 /CN=airlock-two");
}

// The handshake runs under the lobby's header deadline: a client that
// stops mid-handshake is closed when it passes.
TEST_F(McpHttpTlsTest, LobbyClosesAHandshakePastTheHeaderDeadline) {
  StatusOr<std::shared_ptr<TlsCredentials>> tls =
      TlsCredentials::Load({.cert_file = cert_.string(), .key_file = key_.string()});
  ASSERT_TRUE(tls.ok());
  ConnectionLobby::Options o;
  o.header_deadline = 300ms;
  std::atomic<int> handed_over{0};
  ConnectionLobby lobby(o, [&](int fd, std::string, std::unique_ptr<TlsConnection>) {
    ++handed_over;
    close(fd);
  });
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
  UniqueFd client(sv[1]);
  const unsigned char partial[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00};
  ASSERT_EQ(write(client.get(), partial, sizeof partial), static_cast<ssize_t>(sizeof partial));
  const auto start = std::chrono::steady_clock::now();
  lobby.Add(sv[0], /*kept_alive=*/false, TlsConnection::Accept(*(*tls)->Current(), sv[0]));
  pollfd p{client.get(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  char c;
  EXPECT_EQ(read(client.get(), &c, 1), 0);  // EOF: closed by the lobby
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(handed_over, 0);
  EXPECT_EQ(lobby.waiting(), 0u);
}

TEST_F(McpHttpTlsTest, LoadErrorsAreClear) {
  StatusOr<std::shared_ptr<TlsCredentials>> tls =
      TlsCredentials::Load({.cert_file = (dir_ / "missing.pem").string(), .key_file = key_.string()});
  ASSERT_FALSE(tls.ok());
  EXPECT_NE(tls.status().message().find("missing.pem"), std::string::npos) << tls.status().message();
  tls = TlsCredentials::Load({.cert_file = cert_.string(), .key_file = key_.string(), .min_version = "1.1"});
  EXPECT_FALSE(tls.ok());
}

TEST(HttpTlsConfig, KeysParseAndValidate) {
  StatusOr<config::Config> c = config::ParseConfig(
      R"({"server": {"http": {"tls": {"cert_file": "/c.pem", "key_file": "/k.pem", "min_version": "1.3"}}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.http.tls.cert_file, "/c.pem");
  EXPECT_EQ(c->server.http.tls.key_file, "/k.pem");
  EXPECT_EQ(c->server.http.tls.min_version, "1.3");
  EXPECT_TRUE(c->server.http.tls.enabled());
  EXPECT_EQ(config::ConfigToJson(*c)["server"]["http"]["tls"]["min_version"], "1.3");
  EXPECT_FALSE(config::DefaultConfig().server.http.tls.enabled());
  c = config::ParseConfig(R"({"server": {"http": {"tls": {"cert_file": "/c.pem"}}}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("server.http.tls.key_file"), std::string::npos) << c.status().message();
  c = config::ParseConfig(
      R"({"server": {"http": {"tls": {"cert_file": "/c", "key_file": "/k", "min_version": "1.1"}}}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("min_version"), std::string::npos) << c.status().message();
  c = config::ParseConfig(R"({"server": {"http": {"tls": {"certfile": "/c"}}}})");
  EXPECT_FALSE(c.ok());
}

// OAuth bearer tokens cross the network in clear text only on loopback:
// a plain non-loopback listener is refused with a pointer to server.http.tls;
// an HTTPS one is fine, with an https:// resource.
TEST_F(McpHttpTlsTest, OAuthNeedsTlsOffLoopback) {
  config::Config cfg = config::DefaultConfig();
  cfg.server.http.oauth.issuer = "https://idp.example";
  cfg.server.http.oauth.resource = "https://mcp.example/mcp";
  cfg.server.http.oauth.jwks_uri = "https://idp.example/jwks";
  HttpOptions plain;
  plain.host = "0.0.0.0";
  auto oauth = cli::InstallOAuth(cfg, &plain, nullptr);
  ASSERT_FALSE(oauth.ok());
  EXPECT_NE(oauth.status().message().find("server.http.tls"), std::string::npos) << oauth.status().message();

  StatusOr<std::shared_ptr<TlsCredentials>> tls =
      TlsCredentials::Load({.cert_file = cert_.string(), .key_file = key_.string()});
  ASSERT_TRUE(tls.ok());
  HttpOptions https;
  https.host = "0.0.0.0";
  https.tls = *tls;
  oauth = cli::InstallOAuth(cfg, &https, nullptr);
  ASSERT_TRUE(oauth.ok()) << oauth.status().ToString();
  EXPECT_EQ(json::parse(https.oauth_metadata)["resource"], "https://mcp.example/mcp");

  cfg.server.http.oauth.resource = "http://127.0.0.1:8787/mcp";
  HttpOptions https_loopback;
  https_loopback.tls = *tls;
  oauth = cli::InstallOAuth(cfg, &https_loopback, nullptr);
  ASSERT_FALSE(oauth.ok());
  EXPECT_NE(oauth.status().message().find("must be https://"), std::string::npos) << oauth.status().message();
}

}  // namespace
}  // namespace airlock::mcp
