// Aeron's driver settings on DriverContext: set_<name> and get_<name> for every
// aeron_driver_context_set_<name> / aeron_driver_context_get_<name> of aeronmd.h whose value is
// a number, a flag or a string (MediaDriver's options are the set_ names). Hooks and C objects
// (suppliers, trackers, port managers, termination hooks) are not settable from Python: the
// driver calls them on its own threads (.ci/api_coverage.toml says so for each).
#include <optional>
#include <string>

#include "driver_context.hpp"

namespace aeron_py {

#define AERON_PY_SETTER(name, type)                                                              \
    cls.def(                                                                                      \
        "set_" #name,                                                                             \
        [](DriverContext &c, type value) {                                                        \
            if (aeron_driver_context_set_##name(c.check(), value) < 0)                            \
                throw_aeron_error("aeron_driver_context_set_" #name);                             \
        },                                                                                        \
        py::arg("value"), "aeron_driver_context_set_" #name)
#define AERON_PY_STRING_SETTER(name)                                                              \
    cls.def(                                                                                      \
        "set_" #name,                                                                             \
        [](DriverContext &c, const std::string &value) {                                          \
            if (aeron_driver_context_set_##name(c.check(), value.c_str()) < 0)                    \
                throw_aeron_error("aeron_driver_context_set_" #name);                             \
        },                                                                                        \
        py::arg("value"), "aeron_driver_context_set_" #name)
#define AERON_PY_GETTER(name) \
    cls.def("get_" #name, [](DriverContext &c) { return aeron_driver_context_get_##name(c.readable()); }, \
            "aeron_driver_context_get_" #name)

namespace {

// The settings MediaDriver had from the start (and get_dir, get_threading_mode).
void def_first_setters(DriverContextClass &cls) {
    AERON_PY_STRING_SETTER(dir);
    cls.def("get_dir", [](DriverContext &c) { return std::string(aeron_driver_context_get_dir(c.readable())); },
            "aeron_driver_context_get_dir");
    cls.def(
        "set_threading_mode",
        [](DriverContext &c, int mode) {
            if (aeron_driver_context_set_threading_mode(c.check(), static_cast<aeron_threading_mode_t>(mode)) < 0)
                throw_aeron_error("aeron_driver_context_set_threading_mode");
        },
        py::arg("value"), "aeron_driver_context_set_threading_mode");
    cls.def("get_threading_mode",
            [](DriverContext &c) { return static_cast<int>(aeron_driver_context_get_threading_mode(c.readable())); });
    AERON_PY_SETTER(dir_delete_on_start, bool);
    AERON_PY_SETTER(dir_delete_on_shutdown, bool);
    AERON_PY_SETTER(term_buffer_length, size_t);
    AERON_PY_SETTER(ipc_term_buffer_length, size_t);
    AERON_PY_SETTER(term_buffer_sparse_file, bool);
    AERON_PY_SETTER(perform_storage_checks, bool);
    AERON_PY_SETTER(spies_simulate_connection, bool);
    AERON_PY_SETTER(mtu_length, size_t);
    AERON_PY_SETTER(ipc_mtu_length, size_t);
    AERON_PY_SETTER(publication_linger_timeout_ns, uint64_t);
    AERON_PY_SETTER(image_liveness_timeout_ns, uint64_t);
    AERON_PY_SETTER(rcv_status_message_timeout_ns, uint64_t);
    AERON_PY_SETTER(client_liveness_timeout_ns, uint64_t);
    AERON_PY_SETTER(publication_connection_timeout_ns, uint64_t);
    AERON_PY_SETTER(publication_unblock_timeout_ns, uint64_t);
    AERON_PY_SETTER(timer_interval_ns, uint64_t);
    AERON_PY_SETTER(driver_timeout_ms, uint64_t);
    AERON_PY_SETTER(counters_buffer_length, size_t);
    AERON_PY_SETTER(error_buffer_length, size_t);
    AERON_PY_SETTER(loss_report_buffer_length, size_t);
    AERON_PY_SETTER(socket_so_rcvbuf, size_t);
    AERON_PY_SETTER(socket_so_sndbuf, size_t);
    AERON_PY_SETTER(rcv_initial_window_length, size_t);
    AERON_PY_SETTER(publication_reserved_session_id_low, int32_t);
    AERON_PY_SETTER(publication_reserved_session_id_high, int32_t);
    AERON_PY_SETTER(stream_session_limit, int32_t);
    AERON_PY_SETTER(resource_free_limit, uint32_t);
    AERON_PY_SETTER(print_configuration, bool);
    AERON_PY_SETTER(reliable_stream, bool);
    AERON_PY_SETTER(tether_subscriptions, bool);
    AERON_PY_SETTER(rejoin_stream, bool);
    AERON_PY_SETTER(low_file_store_warning_threshold, uint64_t);
    AERON_PY_STRING_SETTER(conductor_idle_strategy);
    AERON_PY_STRING_SETTER(sender_idle_strategy);
    AERON_PY_STRING_SETTER(receiver_idle_strategy);
    AERON_PY_STRING_SETTER(sharednetwork_idle_strategy);
    AERON_PY_STRING_SETTER(shared_idle_strategy);
    AERON_PY_STRING_SETTER(conductor_idle_strategy_init_args);
    AERON_PY_STRING_SETTER(sender_idle_strategy_init_args);
    AERON_PY_STRING_SETTER(receiver_idle_strategy_init_args);
    AERON_PY_STRING_SETTER(sharednetwork_idle_strategy_init_args);
    AERON_PY_STRING_SETTER(shared_idle_strategy_init_args);
}

// Settings added with the C API coverage (issue 23): flow control, NAKs and retransmits,
// untethered subscriptions, name resolution, term windows, buffers, affinity, experimental.
void def_more_setters(DriverContextClass &cls) {
    AERON_PY_SETTER(conductor_cpu_affinity, int32_t);
    AERON_PY_SETTER(connect_enabled, bool);
    AERON_PY_SETTER(counters_free_to_reuse_timeout_ns, uint64_t);
    AERON_PY_SETTER(dir_warn_if_exists, bool);
    AERON_PY_SETTER(enable_experimental_features, bool);
    AERON_PY_SETTER(file_page_size, size_t);
    AERON_PY_SETTER(flow_control_group_min_size, int32_t);
    AERON_PY_SETTER(flow_control_group_tag, int64_t);
    AERON_PY_SETTER(flow_control_receiver_timeout_ns, uint64_t);
    AERON_PY_SETTER(ipc_publication_term_window_length, size_t);
    AERON_PY_SETTER(max_resend, uint32_t);
    AERON_PY_SETTER(nak_multicast_group_size, size_t);
    AERON_PY_SETTER(nak_multicast_max_backoff_ns, uint64_t);
    AERON_PY_SETTER(nak_unicast_delay_ns, uint64_t);
    AERON_PY_SETTER(nak_unicast_retry_delay_ratio, uint64_t);
    AERON_PY_STRING_SETTER(name_resolver_init_args);
    AERON_PY_SETTER(name_resolver_threshold_ns, uint64_t);
    AERON_PY_SETTER(native_resource_agent_cpu_affinity, int32_t);
    AERON_PY_STRING_SETTER(native_resource_agent_idle_strategy);
    AERON_PY_STRING_SETTER(native_resource_agent_idle_strategy_init_args);
    AERON_PY_SETTER(network_publication_max_messages_per_send, uint32_t);
    AERON_PY_SETTER(publication_term_window_length, size_t);
    AERON_PY_SETTER(re_resolution_check_interval_ns, uint64_t);
    AERON_PY_SETTER(receiver_cpu_affinity, int32_t);
    AERON_PY_SETTER(receiver_io_vector_capacity, uint32_t);
    AERON_PY_SETTER(receiver_poll_to_slow_work_ratio, size_t);
    AERON_PY_STRING_SETTER(resolver_bootstrap_neighbor);
    AERON_PY_SETTER(resolver_bootstrap_neighbor_resolution_interval_ns, uint64_t);
    AERON_PY_STRING_SETTER(resolver_interface);
    AERON_PY_STRING_SETTER(resolver_name);
    AERON_PY_SETTER(resolver_neighbor_resolution_interval_ns, uint64_t);
    AERON_PY_SETTER(resolver_neighbor_timeout_ns, uint64_t);
    AERON_PY_SETTER(retransmit_unicast_delay_ns, uint64_t);
    AERON_PY_SETTER(retransmit_unicast_linger_ns, uint64_t);
    AERON_PY_SETTER(self_resolution_interval_ns, uint64_t);
    AERON_PY_SETTER(send_to_status_poll_ratio, size_t);
    AERON_PY_SETTER(sender_cpu_affinity, int32_t);
    AERON_PY_SETTER(sender_io_vector_capacity, uint32_t);
    AERON_PY_SETTER(socket_multicast_ttl, uint8_t);
    AERON_PY_SETTER(socket_tos, int32_t);
    AERON_PY_SETTER(thread_affinity_fail_on_validation_errors, bool);
    AERON_PY_SETTER(thread_affinity_use_cpuset_offsets, bool);
    AERON_PY_SETTER(to_clients_buffer_length, size_t);
    AERON_PY_SETTER(to_conductor_buffer_length, size_t);
    AERON_PY_SETTER(udp_channel_transport_poller_iteration_threshold, size_t);
    AERON_PY_SETTER(udp_channel_transport_poller_socket_poll_limit, int32_t);
    AERON_PY_SETTER(untethered_linger_timeout_ns, uint64_t);
    AERON_PY_SETTER(untethered_resting_timeout_ns, uint64_t);
    AERON_PY_SETTER(untethered_window_limit_timeout_ns, uint64_t);
}

void def_getters(DriverContextClass &cls) {
    AERON_PY_GETTER(term_buffer_length);
    AERON_PY_GETTER(ipc_term_buffer_length);
    AERON_PY_GETTER(mtu_length);
    AERON_PY_GETTER(publication_linger_timeout_ns);
    AERON_PY_GETTER(image_liveness_timeout_ns);
    AERON_PY_GETTER(rcv_status_message_timeout_ns);
    AERON_PY_GETTER(client_liveness_timeout_ns);
    AERON_PY_GETTER(driver_timeout_ms);
    AERON_PY_GETTER(publication_reserved_session_id_low);
    AERON_PY_GETTER(publication_reserved_session_id_high);
    AERON_PY_GETTER(stream_session_limit);
    AERON_PY_GETTER(dir_delete_on_shutdown);
    AERON_PY_GETTER(conductor_cpu_affinity);
    AERON_PY_GETTER(conductor_idle_strategy);
    AERON_PY_GETTER(conductor_idle_strategy_init_args);
    AERON_PY_GETTER(connect_enabled);
    AERON_PY_GETTER(counters_buffer_length);
    AERON_PY_GETTER(counters_free_to_reuse_timeout_ns);
    AERON_PY_GETTER(dir_delete_on_start);
    AERON_PY_GETTER(dir_warn_if_exists);
    AERON_PY_GETTER(enable_experimental_features);
    AERON_PY_GETTER(error_buffer_length);
    AERON_PY_GETTER(file_page_size);
    AERON_PY_GETTER(flow_control_group_min_size);
    AERON_PY_GETTER(flow_control_group_tag);
    AERON_PY_GETTER(flow_control_receiver_timeout_ns);
    AERON_PY_GETTER(ipc_mtu_length);
    AERON_PY_GETTER(ipc_publication_term_window_length);
    AERON_PY_GETTER(loss_report_buffer_length);
    AERON_PY_GETTER(low_file_store_warning_threshold);
    AERON_PY_GETTER(max_resend);
    AERON_PY_GETTER(nak_multicast_group_size);
    AERON_PY_GETTER(nak_multicast_max_backoff_ns);
    AERON_PY_GETTER(nak_unicast_delay_ns);
    AERON_PY_GETTER(nak_unicast_retry_delay_ratio);
    AERON_PY_GETTER(name_resolver_init_args);
    AERON_PY_GETTER(name_resolver_threshold_ns);
    AERON_PY_GETTER(native_resource_agent_cpu_affinity);
    AERON_PY_GETTER(native_resource_agent_idle_strategy);
    AERON_PY_GETTER(native_resource_agent_idle_strategy_init_args);
    AERON_PY_GETTER(network_publication_max_messages_per_send);
    AERON_PY_GETTER(perform_storage_checks);
    AERON_PY_GETTER(print_configuration);
    AERON_PY_GETTER(publication_connection_timeout_ns);
    AERON_PY_GETTER(publication_term_window_length);
    AERON_PY_GETTER(publication_unblock_timeout_ns);
    AERON_PY_GETTER(rcv_initial_window_length);
    AERON_PY_GETTER(re_resolution_check_interval_ns);
    AERON_PY_GETTER(receiver_cpu_affinity);
    AERON_PY_GETTER(receiver_group_tag_is_present);
    AERON_PY_GETTER(receiver_group_tag_value);
    AERON_PY_GETTER(receiver_idle_strategy);
    AERON_PY_GETTER(receiver_idle_strategy_init_args);
    AERON_PY_GETTER(receiver_io_vector_capacity);
    AERON_PY_GETTER(receiver_poll_to_slow_work_ratio);
    AERON_PY_GETTER(rejoin_stream);
    AERON_PY_GETTER(reliable_stream);
    AERON_PY_GETTER(resolver_bootstrap_neighbor);
    AERON_PY_GETTER(resolver_bootstrap_resolution_interval_ns);
    AERON_PY_GETTER(resolver_interface);
    AERON_PY_GETTER(resolver_name);
    AERON_PY_GETTER(resolver_neighbor_resolution_interval_ns);
    AERON_PY_GETTER(resolver_neighbor_timeout_ns);
    AERON_PY_GETTER(resource_free_limit);
    AERON_PY_GETTER(retransmit_unicast_delay_ns);
    AERON_PY_GETTER(retransmit_unicast_linger_ns);
    AERON_PY_GETTER(self_resolution_interval_ns);
    AERON_PY_GETTER(send_to_status_poll_ratio);
    AERON_PY_GETTER(sender_cpu_affinity);
    AERON_PY_GETTER(sender_idle_strategy);
    AERON_PY_GETTER(sender_idle_strategy_init_args);
    AERON_PY_GETTER(sender_io_vector_capacity);
    AERON_PY_GETTER(shared_idle_strategy);
    AERON_PY_GETTER(shared_idle_strategy_init_args);
    AERON_PY_GETTER(sharednetwork_idle_strategy);
    AERON_PY_GETTER(sharednetwork_idle_strategy_init_args);
    AERON_PY_GETTER(socket_multicast_ttl);
    AERON_PY_GETTER(socket_so_rcvbuf);
    AERON_PY_GETTER(socket_so_sndbuf);
    AERON_PY_GETTER(socket_tos);
    AERON_PY_GETTER(spies_simulate_connection);
    AERON_PY_GETTER(term_buffer_sparse_file);
    AERON_PY_GETTER(tether_subscriptions);
    AERON_PY_GETTER(thread_affinity_fail_on_validation_errors);
    AERON_PY_GETTER(thread_affinity_use_cpuset_offsets);
    AERON_PY_GETTER(timer_interval_ns);
    AERON_PY_GETTER(to_clients_buffer_length);
    AERON_PY_GETTER(to_conductor_buffer_length);
    AERON_PY_GETTER(udp_channel_transport_poller_iteration_threshold);
    AERON_PY_GETTER(udp_channel_transport_poller_socket_poll_limit);
    AERON_PY_GETTER(untethered_linger_timeout_ns);
    AERON_PY_GETTER(untethered_resting_timeout_ns);
    AERON_PY_GETTER(untethered_window_limit_timeout_ns);
}

// The ports a channel with port 0 may bind, (low, high); (0, 0): any the system picks.
#define AERON_PY_PORT_RANGE(role)                                                                  \
    cls.def(                                                                                      \
        "set_" #role "_wildcard_port_range",                                                      \
        [](DriverContext &c, std::pair<uint16_t, uint16_t> range) {                               \
            if (range.first > range.second)                                                       \
                throw py::value_error(#role "_wildcard_port_range: (low, high) with low <= high");   \
            if (aeron_driver_context_set_##role##_wildcard_port_range(c.check(), range.first, range.second) < 0) \
                throw_aeron_error("aeron_driver_context_set_" #role "_wildcard_port_range");      \
        },                                                                                        \
        py::arg("value"), "aeron_driver_context_set_" #role "_wildcard_port_range (low, high)"); \
    cls.def(                                                                                      \
        "get_" #role "_wildcard_port_range",                                                      \
        [](DriverContext &c) {                                                                    \
            uint16_t low = 0, high = 0;                                                           \
            if (aeron_driver_context_get_##role##_wildcard_port_range(c.readable(), &low, &high) < 0) \
                throw_aeron_error("aeron_driver_context_get_" #role "_wildcard_port_range");      \
            return std::make_pair(low, high);                                                     \
        },                                                                                        \
        "aeron_driver_context_get_" #role "_wildcard_port_range: (low, high)")

void def_port_ranges(DriverContextClass &cls) {
    AERON_PY_PORT_RANGE(sender);
    AERON_PY_PORT_RANGE(receiver);
}

// Settings whose C type is an enum or a pair: named values from Python, checked here.
void def_named_settings(DriverContextClass &cls) {
    cls.def(
        "set_thread_naming",
        [](DriverContext &c, const std::string &naming) {
            if (naming != "classic" && naming != "new")
                throw py::value_error("thread_naming must be 'classic' or 'new', got '" + naming + "'");
            const auto value = naming == "new" ? AERON_THREAD_NAMING_NEW : AERON_THREAD_NAMING_CLASSIC;
            if (aeron_driver_context_set_thread_naming(c.check(), value) < 0)
                throw_aeron_error("aeron_driver_context_set_thread_naming");
        },
        py::arg("value"), "aeron_driver_context_set_thread_naming: 'classic' or 'new'");
    cls.def(
        "get_thread_naming",
        [](DriverContext &c) {
            return std::string(aeron_driver_context_get_thread_naming(c.readable()) == AERON_THREAD_NAMING_NEW
                                   ? "new" : "classic");
        },
        "aeron_driver_context_get_thread_naming: 'classic' or 'new'");
    cls.def(
        "set_receiver_group_consideration",
        [](DriverContext &c, const std::string &value) {
            aeron_inferable_boolean_t v;
            if (value == "false") v = AERON_FORCE_FALSE;
            else if (value == "true") v = AERON_FORCE_TRUE;
            else if (value == "infer") v = AERON_INFER;
            else throw py::value_error("receiver_group_consideration must be 'false', 'true' or 'infer', got '" + value + "'");
            if (aeron_driver_context_set_receiver_group_consideration(c.check(), v) < 0)
                throw_aeron_error("aeron_driver_context_set_receiver_group_consideration");
        },
        py::arg("value"), "aeron_driver_context_set_receiver_group_consideration: 'false', 'true' or 'infer'");
    cls.def(
        "get_receiver_group_consideration",
        [](DriverContext &c) {
            switch (aeron_driver_context_get_receiver_group_consideration(c.readable())) {
                case AERON_FORCE_FALSE: return std::string("false");
                case AERON_FORCE_TRUE: return std::string("true");
                default: return std::string("infer");
            }
        },
        "aeron_driver_context_get_receiver_group_consideration: 'false', 'true' or 'infer'");
    cls.def(
        "set_receiver_group_tag",
        [](DriverContext &c, std::optional<int64_t> tag) {
            if (aeron_driver_context_set_receiver_group_tag(c.check(), tag.has_value(), tag.value_or(0)) < 0)
                throw_aeron_error("aeron_driver_context_set_receiver_group_tag");
        },
        py::arg("value"), "aeron_driver_context_set_receiver_group_tag: the tag, or None for none");
}

}  // namespace

void def_context_settings(DriverContextClass &cls) {
    def_first_setters(cls);
    def_more_setters(cls);
    def_port_ranges(cls);
    def_named_settings(cls);
    def_getters(cls);
}

}  // namespace aeron_py
