// The driver's command-and-control file: aeron_cnc_* (constants, heartbeat, counters,
// error log, loss report) — what AeronStat, ErrorStat and LossStat read.
#include "common.hpp"

namespace aeron_py {

namespace {

struct CncState {
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
            py::gil_scoped_release release;
            rc = aeron_cnc_init(&state_->cnc, dir.c_str(), timeout_ms);
        }
        if (rc < 0) throw_aeron_error("aeron_cnc_init");
    }
    ~Cnc() { close(); }

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
        d["client_liveness_timeout_ns"] = c.client_liveness_timeout;
        d["start_timestamp_ms"] = c.start_timestamp;
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

    // [(observation_count, first_observation_ms, last_observation_ms, text)]
    py::list error_log(int64_t since_timestamp_ms) {
        state_->check();
        py::list entries;
        aeron_cnc_error_log_read(state_->cnc, on_error_entry, entries.ptr(), since_timestamp_ms);
        return entries;
    }

    // [(observation_count, total_bytes_lost, first_ms, last_ms, session_id, stream_id, channel, source)]
    py::list loss_report() {
        state_->check();
        py::list entries;
        if (aeron_cnc_loss_reporter_read(state_->cnc, on_loss_entry, entries.ptr()) < 0)
            throw_aeron_error("aeron_cnc_loss_reporter_read");
        return entries;
    }

    py::object counters_reader(py::object self) {
        state_->check();
        auto state = state_;
        return make_counters_reader(self, [state] { state->check(); }, aeron_cnc_counters_reader(state_->cnc));
    }

private:
    static void on_error_entry(int32_t count, int64_t first, int64_t last, const char *text, size_t length,
                               void *clientd) {
        auto list = py::reinterpret_borrow<py::list>(static_cast<PyObject *>(clientd));
        list.append(py::make_tuple(count, first, last, py::str(text, length)));
    }

    static void on_loss_entry(void *clientd, int64_t count, int64_t bytes_lost, int64_t first, int64_t last,
                              int32_t session_id, int32_t stream_id, const char *channel, int32_t channel_length,
                              const char *source, int32_t source_length) {
        auto list = py::reinterpret_borrow<py::list>(static_cast<PyObject *>(clientd));
        list.append(py::make_tuple(count, bytes_lost, first, last, session_id, stream_id,
                                   py::str(channel, static_cast<size_t>(channel_length)),
                                   py::str(source, static_cast<size_t>(source_length))));
    }

    std::shared_ptr<CncState> state_;
};

}  // namespace

void init_cnc(py::module_ &m) {
    py::class_<Cnc>(m, "Cnc", "aeron_cnc_t: a media driver's CnC file, mapped read-only.")
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
