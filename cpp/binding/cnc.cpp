// The driver's command-and-control file: aeron_cnc_* (constants, heartbeat, counters,
// error log, loss report) — what AeronStat, ErrorStat and LossStat read. Field names are
// the C struct's (aeron_py.stat names them for users). The error-log and loss-report
// callbacks only copy into C++ storage and never throw (nothing may cross the C frame);
// Python objects are built after the C call returns.
#include "common.hpp"
#include "guarded_class.hpp"

#include <algorithm>

namespace aeron_py {

namespace {

struct ErrorRow {
    int32_t count;
    int64_t first, last;
    std::string text;
};

struct LossRow {
    int64_t count, bytes_lost, first, last;
    int32_t session_id, stream_id;
    std::string channel, source;
};

// Rows copied inside a C callback; `failed` (out of memory) is raised after the call.
template <typename Row>
struct Collected {
    std::vector<Row> rows;
    bool failed = false;

    template <typename Make>
    void add(Make &&make) noexcept {
        if (failed) return;
        try {
            rows.push_back(make());
        } catch (...) {
            failed = true;
        }
    }
};

py::str text_of(const std::string &s) {
    auto text = py::reinterpret_steal<py::str>(
        PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
    if (!text) throw py::error_already_set();
    return text;
}

struct CncState {
    SectionLock lock;  // the Cnc's and its counters readers'
    aeron_cnc_t *cnc = nullptr;
    void check() const {
        if (cnc == nullptr) throw AeronCallError("the CnC file is closed", EPIPE);
    }
};

class Cnc {
public:
    Cnc(const std::string &dir, int64_t timeout_ms) : state_(std::make_shared<CncState>()) {
        int rc;
        {
            ReleasedGil released;
            rc = aeron_cnc_init(&state_->cnc, dir.c_str(), timeout_ms);
        }
        if (rc < 0) throw_aeron_error("aeron_cnc_init");
    }
    ~Cnc() {
        Section section(state_->lock.get());
        close();
    }
    friend PyObject *section_lock(const Cnc &cnc) { return cnc.state_->lock.get(); }

    void close() {
        if (state_->cnc != nullptr) aeron_cnc_close(state_->cnc);
        state_->cnc = nullptr;
    }

    py::dict constants() {
        state_->check();
        aeron_cnc_constants_t c{};
        if (aeron_cnc_constants(state_->cnc, &c) < 0) throw_aeron_error("aeron_cnc_constants");
        py::dict d;
        d["cnc_version"] = c.cnc_version;
        d["to_driver_buffer_length"] = c.to_driver_buffer_length;
        d["to_clients_buffer_length"] = c.to_clients_buffer_length;
        d["counter_metadata_buffer_length"] = c.counter_metadata_buffer_length;
        d["counter_values_buffer_length"] = c.counter_values_buffer_length;
        d["error_log_buffer_length"] = c.error_log_buffer_length;
        d["client_liveness_timeout"] = c.client_liveness_timeout;
        d["start_timestamp"] = c.start_timestamp;
        d["pid"] = c.pid;
        d["file_page_size"] = c.file_page_size;
        return d;
    }

    std::string filename() {
        state_->check();
        return aeron_cnc_filename(state_->cnc);
    }

    int64_t to_driver_heartbeat() {
        state_->check();
        return aeron_cnc_to_driver_heartbeat(state_->cnc);
    }

    // aeron_cnc_error_log_read: [(observation_count, first_observation_ms, last_observation_ms, text)]
    py::list error_log(int64_t since_timestamp_ms) {
        state_->check();
        Collected<ErrorRow> collected;
        aeron_cnc_error_log_read(state_->cnc, on_error_entry, &collected, since_timestamp_ms);
        if (collected.failed) throw std::bad_alloc();
        py::list entries;
        for (const auto &r : collected.rows) entries.append(py::make_tuple(r.count, r.first, r.last, text_of(r.text)));
        return entries;
    }

    // aeron_cnc_loss_reporter_read:
    // [(observation_count, total_bytes_lost, first_ms, last_ms, session_id, stream_id, channel, source)]
    py::list loss_report() {
        state_->check();
        Collected<LossRow> collected;
        if (aeron_cnc_loss_reporter_read(state_->cnc, on_loss_entry, &collected) < 0)
            throw_aeron_error("aeron_cnc_loss_reporter_read");
        if (collected.failed) throw std::bad_alloc();
        py::list entries;
        for (const auto &r : collected.rows)
            entries.append(py::make_tuple(r.count, r.bytes_lost, r.first, r.last, r.session_id, r.stream_id,
                                          text_of(r.channel), text_of(r.source)));
        return entries;
    }

    py::object counters_reader(py::object self) {
        state_->check();
        auto state = state_;
        return make_counters_reader(self, state_->lock.object(), [state] { state->check(); },
                                    aeron_cnc_counters_reader(state_->cnc));
    }

private:
    static void on_error_entry(int32_t count, int64_t first, int64_t last, const char *text, size_t length,
                               void *clientd) noexcept {
        static_cast<Collected<ErrorRow> *>(clientd)->add(
            [&] { return ErrorRow{count, first, last, std::string(text, length)}; });
    }

    static void on_loss_entry(void *clientd, int64_t count, int64_t bytes_lost, int64_t first, int64_t last,
                              int32_t session_id, int32_t stream_id, const char *channel, int32_t channel_length,
                              const char *source, int32_t source_length) noexcept {
        static_cast<Collected<LossRow> *>(clientd)->add([&] {
            return LossRow{count, bytes_lost, first, last, session_id, stream_id,
                           std::string(channel, static_cast<size_t>(std::max(channel_length, 0))),
                           std::string(source, static_cast<size_t>(std::max(source_length, 0)))};
        });
    }

    std::shared_ptr<CncState> state_;
};

}  // namespace

void init_cnc(py::module_ &m) {
    guarded_class<Cnc>(m, "Cnc", "aeron_cnc_t: a media driver's CnC file, mapped read-only.")
        .def(py::init<const std::string &, int64_t>(), py::arg("dir"), py::arg("timeout_ms"),
             "aeron_cnc_init (releases the GIL while waiting for the file).")
        .def("close", &Cnc::close, "aeron_cnc_close; idempotent.")
        .def("constants", &Cnc::constants, "aeron_cnc_constants")
        .def_property_readonly("filename", &Cnc::filename, "aeron_cnc_filename")
        .def("to_driver_heartbeat", &Cnc::to_driver_heartbeat, "aeron_cnc_to_driver_heartbeat (epoch ms).")
        .def("error_log", &Cnc::error_log, py::arg("since_timestamp_ms") = 0, "aeron_cnc_error_log_read")
        .def("loss_report", &Cnc::loss_report, "aeron_cnc_loss_reporter_read")
        .def("counters_reader", [](py::object self) { return self.cast<Cnc &>().counters_reader(self); },
             "aeron_cnc_counters_reader");
}

}  // namespace aeron_py
