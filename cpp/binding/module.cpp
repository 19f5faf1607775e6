// PYBIND11_MODULE for aeron_py._aeron: one init function per concept.
#include "common.hpp"

#include "fastcall.hpp"
#include "image.hpp"
#include "poll_set.hpp"
#include "tricks.hpp"
#include "uninitialised.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace aeron_py {

namespace tricks {

bool enabled = true;

bool read_environment() noexcept {
    const char *raw = std::getenv("AERON_PY_NO_TRICKS");
    std::string value = raw == nullptr ? "" : raw;
    for (char &c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (value.empty() || value == "0" || value == "false" || value == "no" || value == "off") {
        enabled = true;
        return true;
    }
    if (value == "1" || value == "true" || value == "yes" || value == "on") {
        enabled = false;
        return true;
    }
    PyErr_Format(PyExc_ImportError,
                 "AERON_PY_NO_TRICKS=%s: expected 1, true, yes or on (tricks off) or 0, false, no, off or empty "
                 "(tricks on)",
                 raw);
    return false;
}

}  // namespace tricks

void set_public_subscription_class(py::object cls);
void init_crypto(py::module_ &m);  // crypto.cpp: the submodule aeron_py._aeron.crypto (libsodium)
#ifdef AERON_PY_WITH_ARCHIVE
namespace archive {
void init_archive(py::module_ &m);  // archive/archive.cpp: the submodule aeron_py._aeron.archive
}
#endif

void init_module(py::module_ &m) {
    // First: every later line may consult the switch (tricks.hpp).
    if (!tricks::read_environment()) throw py::error_already_set();
    m.doc() = "Thin bindings over Aeron's C client (aeronc.h) and embedded C media driver (aeronmd.h).";
    init_errors(m);
    init_fragment(m);
    init_image(m);
    init_subscription(m);
    init_poll_set(m);
    init_publication(m);
    init_counters(m);
    init_client_counter(m);
    init_client(m);
    init_driver(m);
    init_cnc(m);
    init_idle(m);
    init_crypto(m);
#ifdef AERON_PY_WITH_ARCHIVE
    archive::init_archive(m);
#endif
    m.def("version_full", [] { return std::string(aeron_version_full()); }, "aeron_version_full");
    m.def("version_text", [] { return std::string(aeron_version_text()); }, "aeron_version_text");
    m.def("version_gitsha", [] { return std::string(aeron_version_gitsha()); }, "aeron_version_gitsha");
    m.def("nano_clock", &aeron_nano_clock, "aeron_nano_clock");
    m.def("epoch_clock", &aeron_epoch_clock, "aeron_epoch_clock");
    m.def(
        "_register_subscription_side",
        [](py::object subscription, py::object image, py::object snapshot_error) {
            set_public_subscription_class(std::move(subscription));
            set_public_image_class(std::move(image));
            set_snapshot_error_type(std::move(snapshot_error));
        },
        py::arg("subscription"), py::arg("image"), py::arg("snapshot_error"),
        "The Python subclasses the extension makes Subscription and Image objects as, and the exception a "
        "live operation on a callback's Image snapshot raises (aeron_py registers them at import).");
    m.def("_adopt_fast_methods", &fast::adopt_fast_methods, py::arg("cls"),
          "Gives a Python subclass its own descriptor of each fast method it inherits, so CPython specialises "
          "the calls (aeron_py calls it for its public classes at import).");
    m.attr("TRICKS") = py::bool_(tricks::on());
    // Whether the tricks on CPython object layouts run (dead views' slices, recycled ints): TRICKS
    // on a CPython whose layouts were checked (tricks.hpp); False on a free-threaded build.
    m.attr("LAYOUT_TRICKS") = py::bool_(tricks::layouts_on());
    refuse_uninitialised(m);  // last: every class is registered by now
}
}  // namespace aeron_py

PYBIND11_MODULE(_aeron, m, py::mod_gil_not_used()) { aeron_py::init_module(m); }
