// A loopback HTTP server for tests (cpp-httplib on 127.0.0.1, port 0): records every request and answers through a
// handler the test sets. Started in the constructor, stopped and joined in the destructor.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lakerun::track::testing {

struct RecordedRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;
  std::string body;
  std::string Query(const std::string& key) const {
    auto it = query.find(key);
    return it == query.end() ? "" : it->second;
  }
};

struct CannedResponse {
  int status = 200;
  std::string body = "{}";
};

class TestHttpServer {
 public:
  using Handler = std::function<CannedResponse(const RecordedRequest&)>;

  explicit TestHttpServer(Handler handler) : handler_(std::move(handler)) {
    server_.set_read_timeout(10, 0);
    server_.set_write_timeout(10, 0);
    server_.set_keep_alive_timeout(2);
    server_.set_tcp_nodelay(true);  // as production servers do; otherwise Nagle + delayed ACK add ~40 ms per call
    server_.set_payload_max_length(64 << 20);
    auto handle = [this](const httplib::Request& req, httplib::Response& res) {
      RecordedRequest r;
      r.method = req.method;
      r.path = req.path;
      for (const auto& [k, v] : req.params) r.query.emplace(k, v);
      for (const auto& [k, v] : req.headers) r.headers[k] = v;
      r.body = req.body;
      Handler handler;
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(r);
        handler = handler_;
      }
      const CannedResponse out = handler(r);
      res.status = out.status;
      res.set_content(out.body, "application/json");
    };
    server_.Get(".*", handle);
    server_.Post(".*", handle);
    server_.Put(".*", handle);
    server_.Patch(".*", handle);
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("test HTTP server: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  ~TestHttpServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<RecordedRequest> requests_to(const std::string& path_suffix) const {
    std::vector<RecordedRequest> out;
    for (auto& r : requests()) {
      if (r.path.size() >= path_suffix.size() &&
          r.path.compare(r.path.size() - path_suffix.size(), path_suffix.size(), path_suffix) == 0) {
        out.push_back(r);
      }
    }
    return out;
  }
  void set_handler(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(handler);
  }

 private:
  httplib::Server server_;
  mutable std::mutex mu_;
  Handler handler_;
  std::vector<RecordedRequest> requests_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace lakerun::track::testing
