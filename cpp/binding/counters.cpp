// Counters: aeron_counters_reader_t (aeron_counters_reader_*), from a client or a CnC file.
// Every counter id is checked against aeron_counters_reader_max_counter_id (IndexError)
// before the C call: aeron_counters_reader_addr does no bounds check of its own. The
// foreach callback only copies into C++ storage and never throws (no exception may cross
// the C frame); Python objects are built after the C call returns.
#include "common.hpp"
#include "guarded_class.hpp"

namespace aeron_py {

namespace {

struct CounterRow {
    int64_t value;
    int32_t id;
    int32_t type_id;
    std::string key;
    std::string label;
};

struct CounterRows {
    std::vector<CounterRow> rows;
    bool failed = false;  // out of memory while copying: raised after the C call
};

class CountersReader {
public:
    CountersReader(py::object owner, py::object lock, std::function<void()> check, aeron_counters_reader_t *reader)
        : owner_(std::move(owner)), lock_(std::move(lock)), check_(std::move(check)), reader_(reader) {}
    friend PyObject *section_lock(const CountersReader &reader) { return reader.lock_.ptr(); }

    // aeron_counters_reader_foreach_counter: [(counter_id, type_id, label, value, key bytes)].
    py::list counters() {
        check_();
        CounterRows collected;
        aeron_counters_reader_foreach_counter(reader_, on_counter, &collected);
        if (collected.failed) throw std::bad_alloc();
        py::list result;
        for (const auto &row : collected.rows) {
            py::object label = py::reinterpret_steal<py::object>(
                PyUnicode_DecodeUTF8(row.label.data(), static_cast<Py_ssize_t>(row.label.size()), "replace"));
            if (!label) throw py::error_already_set();
            result.append(py::make_tuple(row.id, row.type_id, label, row.value, py::bytes(row.key)));
        }
        return result;
    }

    int64_t value(int64_t id) {
        const int32_t counter_id = check_id(id);
        int64_t *address = aeron_counters_reader_addr(reader_, counter_id);
        if (address == nullptr) throw py::index_error("no counter with id " + std::to_string(counter_id));
        return __atomic_load_n(address, __ATOMIC_ACQUIRE);
    }

    int32_t max_counter_id() {
        check_();
        return aeron_counters_reader_max_counter_id(reader_);
    }

    std::string label(int64_t id) {
        const int32_t counter_id = check_id(id);
        char buffer[AERON_COUNTER_MAX_LABEL_LENGTH];
        const int length = aeron_counters_reader_counter_label(reader_, counter_id, buffer, sizeof buffer);
        if (length < 0) throw_aeron_error("aeron_counters_reader_counter_label");
        return std::string(buffer, static_cast<size_t>(length));
    }

    int32_t state(int64_t id) {
        return field<int32_t, aeron_counters_reader_counter_state>(id, "aeron_counters_reader_counter_state");
    }
    int32_t type_id(int64_t id) {
        return field<int32_t, aeron_counters_reader_counter_type_id>(id, "aeron_counters_reader_counter_type_id");
    }
    int64_t registration_id(int64_t id) {
        return field<int64_t, aeron_counters_reader_counter_registration_id>(
            id, "aeron_counters_reader_counter_registration_id");
    }
    int64_t owner_id(int64_t id) {
        return field<int64_t, aeron_counters_reader_counter_owner_id>(id, "aeron_counters_reader_counter_owner_id");
    }
    int64_t reference_id(int64_t id) {
        return field<int64_t, aeron_counters_reader_counter_reference_id>(
            id, "aeron_counters_reader_counter_reference_id");
    }
    int64_t free_for_reuse_deadline_ms(int64_t id) {
        return field<int64_t, aeron_counters_reader_free_for_reuse_deadline_ms>(
            id, "aeron_counters_reader_free_for_reuse_deadline_ms");
    }

    // A copy of the counter's key (AERON_COUNTER_MAX_KEY_LENGTH bytes, as the metadata holds it).
    py::bytes key(int64_t id) {
        const int32_t counter_id = check_id(id);
        uint8_t *key = nullptr;
        if (aeron_counters_reader_metadata_key(reader_, counter_id, &key) < 0)
            throw_aeron_error("aeron_counters_reader_metadata_key");
        return py::bytes(reinterpret_cast<const char *>(key), AERON_COUNTER_MAX_KEY_LENGTH);
    }

    int32_t find(int32_t type_id, int64_t registration_id) {
        check_();
        return aeron_counters_reader_find_by_type_id_and_registration_id(reader_, type_id, registration_id);
    }

private:
    // One metadata field of a counter (aeron_counters_reader_counter_<field>(reader, id, &out)).
    template <typename T, int (*Read)(aeron_counters_reader_t *, int32_t, T *)>
    T field(int64_t id, const char *call) {
        const int32_t counter_id = check_id(id);
        T value{};
        if (Read(reader_, counter_id, &value) < 0) throw_aeron_error(call);
        return value;
    }

    // The owner is open and 0 <= counter_id <= max_counter_id, else IndexError naming both.
    // Taken as int64 so any Python int in range of a C long long gets IndexError, not TypeError.
    int32_t check_id(int64_t counter_id) {
        check_();
        const int32_t max_id = aeron_counters_reader_max_counter_id(reader_);
        if (counter_id < 0 || counter_id > max_id)
            throw py::index_error("counter id " + std::to_string(counter_id) + " out of range 0.." +
                                  std::to_string(max_id));
        return static_cast<int32_t>(counter_id);
    }

    static void on_counter(int64_t value, int32_t id, int32_t type_id, const uint8_t *key, size_t key_length,
                           const char *label, size_t label_length, void *clientd) noexcept {
        auto *collected = static_cast<CounterRows *>(clientd);
        if (collected->failed) return;
        try {
            collected->rows.push_back(CounterRow{value, id, type_id,
                                                 std::string(reinterpret_cast<const char *>(key), key_length),
                                                 std::string(label, label_length)});
        } catch (...) {
            collected->failed = true;
        }
    }

    py::object owner_;
    py::object lock_;  // the Section lock: the client's, or the CnC object
    std::function<void()> check_;
    aeron_counters_reader_t *reader_;
};

}  // namespace

py::object make_counters_reader(py::object owner, py::object lock, std::function<void()> check,
                                aeron_counters_reader_t *reader) {
    return py::cast(new CountersReader(std::move(owner), std::move(lock), std::move(check), reader),
                    py::return_value_policy::take_ownership);
}

void init_counters(py::module_ &m) {
    guarded_class<CountersReader>(m, "CountersReader", "aeron_counters_reader_t")
        .def("counters", &CountersReader::counters,
             "aeron_counters_reader_foreach_counter: [(counter_id, type_id, label, value, key)].")
        .def("value", &CountersReader::value, py::arg("counter_id"),
             "aeron_counters_reader_addr, read atomically. IndexError outside 0..max_counter_id.")
        .def_property_readonly("max_counter_id", &CountersReader::max_counter_id,
                               "aeron_counters_reader_max_counter_id")
        .def("label", &CountersReader::label, py::arg("counter_id"), "aeron_counters_reader_counter_label")
        .def("state", &CountersReader::state, py::arg("counter_id"), "aeron_counters_reader_counter_state")
        .def("type_id", &CountersReader::type_id, py::arg("counter_id"), "aeron_counters_reader_counter_type_id")
        .def("registration_id", &CountersReader::registration_id, py::arg("counter_id"),
             "aeron_counters_reader_counter_registration_id")
        .def("owner_id", &CountersReader::owner_id, py::arg("counter_id"),
             "aeron_counters_reader_counter_owner_id: the client id that allocated it")
        .def("reference_id", &CountersReader::reference_id, py::arg("counter_id"),
             "aeron_counters_reader_counter_reference_id")
        .def("free_for_reuse_deadline_ms", &CountersReader::free_for_reuse_deadline_ms, py::arg("counter_id"),
             "aeron_counters_reader_free_for_reuse_deadline_ms: when a freed slot may be reused (epoch ms)")
        .def("key", &CountersReader::key, py::arg("counter_id"),
             "aeron_counters_reader_metadata_key: a copy of the counter's key (the full key field)")
        .def("find_by_type_id_and_registration_id", &CountersReader::find, py::arg("type_id"),
             py::arg("registration_id"), "aeron_counters_reader_find_by_type_id_and_registration_id");
    m.attr("COUNTER_RECORD_ALLOCATED") = AERON_COUNTER_RECORD_ALLOCATED;
}

}  // namespace aeron_py
