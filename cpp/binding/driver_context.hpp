// aeron_driver_context_t as the extension holds it: created by DriverContext(), owned by a
// started driver from then on (driver.cpp); its settings are in driver_settings.cpp.
#pragma once

#include <cerrno>

#include "common.hpp"
#include "context_init.hpp"
#include "guarded_class.hpp"

extern "C" {
#include "aeronmd.h"
}

namespace aeron_py {

struct DriverContext {
    SectionLock lock;  // also its driver's (driver.cpp): a close changes both
    aeron_driver_context_t *context = nullptr;
    bool in_use = false;  // owned by a started driver from then on
    bool closed = false;  // its driver closed it: `context` is gone

    DriverContext() {
        if (init_context_in_turn([this] { return aeron_driver_context_init(&context); }) < 0)
            throw_aeron_error("aeron_driver_context_init");
    }
    ~DriverContext() {
        if (!in_use && context != nullptr) aeron_driver_context_close(context);
    }
    aeron_driver_context_t *check() const {
        if (in_use) throw AeronCallError("this driver context belongs to a driver already", EINVAL);
        return context;
    }
    // For getters: the context may be read while its driver runs, never after it closed.
    aeron_driver_context_t *readable() const {
        if (closed) throw AeronCallError("this driver context was closed with its driver", EPIPE);
        return context;
    }
    friend PyObject *section_lock(const DriverContext &context) { return context.lock.get(); }
};

using DriverContextClass = guarded_class<DriverContext>;

// Aeron's own settings: set_<name> for every aeron_driver_context_set_<name> of a plain value,
// get_<name> for every aeron_driver_context_get_<name> (driver_settings.cpp).
void def_context_settings(DriverContextClass &cls);

}  // namespace aeron_py
