// The TLS transport over loopback with certificates the openssl CLI makes
// (make_tls_certs.sh): handshakes, certificate and host name checks, client
// certificates, and peers that break the handshake.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <thread>

#include "transport/tls/tls_connection.hpp"
#include "transport/transport.hpp"

using namespace rgpu::transport;
using Clock = std::chrono::steady_clock;

namespace {

std::string g_certs;

std::string cert(const std::string& name) { return g_certs + "/" + name; }

class TlsTransport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/rgpu-tls-test-XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    g_certs = tmpl;
    ASSERT_EQ(std::system((std::string(RGPU_MAKE_TLS_CERTS) + " " + g_certs).c_str()), 0);
  }
  static void TearDownTestSuite() { std::system(("rm -rf " + g_certs).c_str()); }

  // A server with `certificate` (server or client-ca signed, by name) that
  // asks for client certificates signed by client_ca when given.
  void serve(const std::string& certificate = "server", const std::string& client_ca = "") {
    server_ = make_tls_server_transport(
        {cert(certificate + ".pem"), cert(certificate + ".key"), client_ca.empty() ? "" : cert(client_ca)});
    listener_ = server_->listen({"127.0.0.1", 0});
    port_ = listener_->local_endpoint().port;
  }

  std::unique_ptr<Connection> connect(TlsSettings client, const std::string& host = "127.0.0.1") {
    return make_tls_client_transport(client)->connect({host, port_}, 2000);
  }

  // The server side of the next connection, served (read from) in a thread.
  std::future<std::string> serve_one_read(size_t n) {
    return std::async(std::launch::async, [this, n] {
      auto c = listener_->accept();
      std::string got(n, '\0');
      c->recv(got.data(), n);
      iovec v{got.data(), got.size()};
      c->send({&v, 1});
      return got;
    });
  }

  std::unique_ptr<Transport> server_;
  std::unique_ptr<Listener> listener_;
  uint16_t port_ = 0;
};

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 131 + (i >> 14));
  return s;
}

TEST_F(TlsTransport, HandshakeCarriesDataBothWays) {
  serve();
  // Small pieces held back by `more`, a piece across a record, and bulk.
  const std::string small = "header", mid = pattern(20000), bulk = pattern(24u << 20);
  const size_t total = small.size() + mid.size() + bulk.size();
  auto served = serve_one_read(total);
  auto c = connect({"", "", cert("ca.pem")});
  iovec first{const_cast<char*>(small.data()), small.size()};
  c->send({&first, 1}, true);
  iovec rest[2] = {{const_cast<char*>(mid.data()), mid.size()}, {const_cast<char*>(bulk.data()), bulk.size()}};
  c->send(rest);
  std::string echoed(total, '\0');
  c->recv(echoed.data(), total);
  EXPECT_EQ(served.get(), small + mid + bulk);
  EXPECT_EQ(echoed, small + mid + bulk);
  EXPECT_FALSE(c->passes_descriptors());
  EXPECT_EQ(c->take_fd(), -1);
  EXPECT_THROW(c->send_with_fd({&first, 1}, 0), TransportError);
}

TEST_F(TlsTransport, HostNameLocalhostMatchesTheCertificate) {
  serve();
  auto served = serve_one_read(2);
  auto c = connect({"", "", cert("ca.pem")}, "localhost");
  iovec v{const_cast<char*>("ok"), 2};
  c->send({&v, 1});
  EXPECT_EQ(served.get(), "ok");
}

// The client refuses the server's certificate in its handshake; the server
// never gets a session.
void expect_server_refused(Listener& listener, const std::function<std::unique_ptr<Connection>()>& connect,
                           const std::string& why) {
  auto served = std::async(std::launch::async, [&] {
    auto c = listener.accept();
    char b;
    EXPECT_THROW(c->recv(&b, 1), TransportError);
  });
  try {
    connect();
    ADD_FAILURE() << "the server's certificate was accepted";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
  served.get();
}

TEST_F(TlsTransport, CertificateOfAnotherHostIsRefused) {
  serve("client");  // a valid certificate, for the name "client"
  expect_server_refused(*listener_, [&] { return connect({"", "", cert("client-ca.pem")}); },
                        "certificate verify failed");
}

TEST_F(TlsTransport, ServerSignedByAnotherCaIsRefused) {
  serve("other-server");
  expect_server_refused(*listener_, [&] { return connect({"", "", cert("ca.pem")}); }, "certificate verify failed");
}

TEST_F(TlsTransport, RequiredClientCertificateAdmits) {
  serve("server", "client-ca.pem");
  auto served = serve_one_read(2);
  auto c = connect({cert("client.pem"), cert("client.key"), cert("ca.pem")});
  iovec v{const_cast<char*>("hi"), 2};
  c->send({&v, 1});
  char back[2];
  c->recv(back, 2);
  EXPECT_EQ(served.get(), "hi");
}

// In TLS 1.3 the client finishes its handshake first: a refused client
// learns it (an alert) at its next read, and the server never serves it.
void expect_refused_client(Listener& listener, const std::function<std::unique_ptr<Connection>()>& connect) {
  auto served = std::async(std::launch::async, [&] {
    auto s = listener.accept();
    char b;
    EXPECT_THROW(s->recv(&b, 1), TransportError);
  });
  char b;
  try {
    // As an rgpu client does: it waits for the server's first frame.
    auto c = connect();
    c->recv(&b, 1);
    ADD_FAILURE() << "a client without an accepted certificate was served";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("alert"), std::string::npos) << e.what();
  }
  served.get();
}

TEST_F(TlsTransport, RequiredClientCertificateMissingIsRefused) {
  serve("server", "client-ca.pem");
  expect_refused_client(*listener_, [&] { return connect({"", "", cert("ca.pem")}); });
}

TEST_F(TlsTransport, ClientCertificateOfAnotherCaIsRefused) {
  serve("server", "client-ca.pem");
  expect_refused_client(*listener_,
                        [&] { return connect({cert("stranger.pem"), cert("stranger.key"), cert("ca.pem")}); });
}

// A raw TCP peer of the TLS server: what the server's first read makes of
// `bytes` (then the peer closes when close_after), and how long it took.
std::pair<std::string, double> server_read_after(Listener& listener, uint16_t port, const std::string& bytes,
                                                 bool close_after) {
  auto raw = make_tcp_transport()->connect({"127.0.0.1", port}, 1000);
  if (!bytes.empty()) {
    iovec v{const_cast<char*>(bytes.data()), bytes.size()};
    raw->send({&v, 1});
  }
  if (close_after) raw.reset();
  auto s = listener.accept();
  auto t0 = Clock::now();
  std::string why;
  try {
    char b;
    s->recv(&b, 1);
  } catch (const TransportError& e) {
    why = e.what();
  }
  return {why, std::chrono::duration<double>(Clock::now() - t0).count()};
}

TEST_F(TlsTransport, GarbageClientHelloFailsAtOnce) {
  serve();
  auto [why, seconds] = server_read_after(*listener_, port_, "GET / HTTP/1.0\r\n\r\n", false);
  EXPECT_NE(why.find("TLS handshake"), std::string::npos) << why;
  EXPECT_LT(seconds, 1.0);
}

TEST_F(TlsTransport, PeerClosingMidHandshakeFailsAtOnce) {
  serve();
  // The start of a ClientHello record (handshake, TLS 1.0 framing, 512 bytes), then gone.
  auto [why, seconds] = server_read_after(*listener_, port_, std::string("\x16\x03\x01\x02\x00\x01", 6), true);
  EXPECT_NE(why.find("closed"), std::string::npos) << why;
  EXPECT_LT(seconds, 1.0);
}

TEST_F(TlsTransport, ShortClientHelloTimesOut) {
  serve();
  // A plain rgpu client sends nothing first: the same wait ends the same way.
  auto [why, seconds] = server_read_after(*listener_, port_, std::string("\x16\x03\x01", 3), false);
  EXPECT_NE(why.find("timed out"), std::string::npos) << why;
  EXPECT_GE(seconds, TlsConnection::kServerHandshakeTimeoutMs / 1000.0 - 0.1);
  EXPECT_LT(seconds, TlsConnection::kServerHandshakeTimeoutMs / 1000.0 + 2);
}

TEST_F(TlsTransport, TlsClientOfAPlainServerFailsAtOnce) {
  auto plain = make_tcp_transport()->listen({"127.0.0.1", 0});
  port_ = plain->local_endpoint().port;
  // An rgpu server speaks first: its challenge frame starts "RGPU".
  auto served = std::async(std::launch::async, [&] {
    auto s = plain->accept();
    iovec v{const_cast<char*>("RGPU\x00\x01\x00\x00"), 8};
    s->send({&v, 1});
    // The ClientHello, then the client hangs up.
    char b[4096];
    EXPECT_THROW(s->recv(b, sizeof b), TransportError);
  });
  auto t0 = Clock::now();
  try {
    connect({"", "", cert("ca.pem")});
    ADD_FAILURE() << "a TLS handshake with a plain server succeeded";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("does not speak TLS"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.0);
  served.get();
}

TEST_F(TlsTransport, JoinListenerSpeaksTls) {
  serve();
  auto served = std::async(std::launch::async, [this] {
    auto first = listener_->accept();
    char b;
    first->recv(&b, 1);
    auto beside = first->listen_beside();
    uint16_t port = beside->local_endpoint().port;
    iovec v{&port, sizeof port};
    first->send({&v, 1});
    auto joined = beside->accept();
    char got[4];
    joined->recv(got, 4);
    return std::string(got, 4);
  });
  auto transport = make_tls_client_transport({"", "", cert("ca.pem")});
  auto c = transport->connect({"127.0.0.1", port_}, 2000);
  char b = 1;
  iovec v{&b, 1};
  c->send({&v, 1});
  uint16_t port;
  c->recv(&port, sizeof port);
  auto j = transport->connect({"127.0.0.1", port}, 2000);
  iovec w{const_cast<char*>("join"), 4};
  j->send({&w, 1});
  EXPECT_EQ(served.get(), "join");
}

TEST_F(TlsTransport, UnusableFilesAreNamed) {
  try {
    make_tls_server_transport({cert("server.pem"), cert("client.key"), ""});
    ADD_FAILURE() << "a key of another certificate was taken";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("private key"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mismatch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_tls_client_transport({"", "", cert("missing.pem")}), TransportError);
  EXPECT_THROW(make_tls_client_transport({cert("client.pem"), "", ""}), TransportError);
}

}  // namespace
