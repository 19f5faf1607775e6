// Counters: aeron_counters_reader_t (aeron_counters_reader_*), from a client or a CnC file.
#include "common.hpp"

namespace aeron_py {

namespace {

class CountersReader {
public:
    CountersReader(py::object owner, std::function<void()> check, aeron_counters_reader_t *reader)
        : owner_(std::move(owner)), check_(std::move(check)), reader_(reader) {}

    // aeron_counters_reader_foreach_counter: [(counter_id, type_id, label, value, key bytes)].
    py::list counters() {
        check_();
        py::list result;
        aeron_counters_reader_foreach_counter(reader_, on_counter, result.ptr());
        return result;
    }

    int64_t value(int32_t counter_id) {
        check_();
        int64_t *address = aeron_counters_reader_addr(reader_, counter_id);
        if (address == nullptr) throw AeronCallError("no counter with id " + std::to_string(counter_id), EINVAL);
        return __atomic_load_n(address, __ATOMIC_ACQUIRE);
    }

    int32_t max_counter_id() {
        check_();
        return aeron_counters_reader_max_counter_id(reader_);
    }

    std::string label(int32_t counter_id) {
        check_();
        char buffer[512];
        const int length = aeron_counters_reader_counter_label(reader_, counter_id, buffer, sizeof buffer);
        if (length < 0) throw_aeron_error("aeron_counters_reader_counter_label");
        return std::string(buffer, static_cast<size_t>(length));
    }

    int32_t state(int32_t counter_id) {
        check_();
        int32_t state = 0;
        if (aeron_counters_reader_counter_state(reader_, counter_id, &state) < 0)
            throw_aeron_error("aeron_counters_reader_counter_state");
        return state;
    }

    int32_t type_id(int32_t counter_id) {
        check_();
        int32_t type = 0;
        if (aeron_counters_reader_counter_type_id(reader_, counter_id, &type) < 0)
            throw_aeron_error("aeron_counters_reader_counter_type_id");
        return type;
    }

    int64_t registration_id(int32_t counter_id) {
        check_();
        int64_t id = 0;
        if (aeron_counters_reader_counter_registration_id(reader_, counter_id, &id) < 0)
            throw_aeron_error("aeron_counters_reader_counter_registration_id");
        return id;
    }

    int32_t find(int32_t type_id, int64_t registration_id) {
        check_();
        return aeron_counters_reader_find_by_type_id_and_registration_id(reader_, type_id, registration_id);
    }

private:
    static void on_counter(int64_t value, int32_t id, int32_t type_id, const uint8_t *key, size_t key_length,
                           const char *label, size_t label_length, void *clientd) {
        auto list = py::reinterpret_borrow<py::list>(static_cast<PyObject *>(clientd));
        list.append(py::make_tuple(id, type_id, py::str(label, label_length), value,
                                   py::bytes(reinterpret_cast<const char *>(key), key_length)));
    }

    py::object owner_;
    std::function<void()> check_;
    aeron_counters_reader_t *reader_;
};

}  // namespace

py::object make_counters_reader(py::object owner, std::function<void()> check, aeron_counters_reader_t *reader) {
    return py::cast(new CountersReader(std::move(owner), std::move(check), reader),
                    py::return_value_policy::take_ownership);
}

void init_counters(py::module_ &m) {
    py::class_<CountersReader>(m, "CountersReader", "aeron_counters_reader_t")
        .def("counters", &CountersReader::counters,
             "aeron_counters_reader_foreach_counter: [(counter_id, type_id, label, value, key)].")
        .def("value", &CountersReader::value, py::arg("counter_id"), "aeron_counters_reader_addr, read atomically.")
        .def_property_readonly("max_counter_id", &CountersReader::max_counter_id,
                               "aeron_counters_reader_max_counter_id")
        .def("label", &CountersReader::label, py::arg("counter_id"), "aeron_counters_reader_counter_label")
        .def("state", &CountersReader::state, py::arg("counter_id"), "aeron_counters_reader_counter_state")
        .def("type_id", &CountersReader::type_id, py::arg("counter_id"), "aeron_counters_reader_counter_type_id")
        .def("registration_id", &CountersReader::registration_id, py::arg("counter_id"),
             "aeron_counters_reader_counter_registration_id")
        .def("find_by_type_id_and_registration_id", &CountersReader::find, py::arg("type_id"),
             py::arg("registration_id"), "aeron_counters_reader_find_by_type_id_and_registration_id");
    m.attr("COUNTER_RECORD_ALLOCATED") = AERON_COUNTER_RECORD_ALLOCATED;
}

}  // namespace aeron_py
