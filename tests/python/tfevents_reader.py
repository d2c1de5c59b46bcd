"""An independent reader of TensorBoard event files, for the tests: the TFRecord framing is checked
with a bit-at-a-time CRC-32C written here, and the Event protos are decoded by the protobuf library
(Debian's python3-protobuf or PyPI's protobuf) from message descriptors declared here, field numbers as in
tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto."""

import struct

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def unmask(masked: int) -> int:
    rotated = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF


def read_records(path):
    """The records of a TFRecord file; raises ValueError naming the offset of a bad CRC or a cut."""
    with open(path, "rb") as f:
        data = f.read()
    records = []
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise ValueError(f"{path}: record header cut at byte {at}")
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        if unmask(length_crc) != crc32c(data[at:at + 8]):
            raise ValueError(f"{path}: bad length CRC at byte {at}")
        start = at + 12
        if len(data) - start < length + 4:
            raise ValueError(f"{path}: record cut at byte {start}")
        payload = data[start:start + length]
        (data_crc,) = struct.unpack_from("<I", data, start + length)
        if unmask(data_crc) != crc32c(payload):
            raise ValueError(f"{path}: bad data CRC at byte {start}")
        records.append(payload)
        at = start + length + 4
    return records


def _event_class():
    proto = descriptor_pb2.FileDescriptorProto(name="livemon_test_event.proto", package="tbtest", syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto

    summary = proto.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.field.add(name="node_name", number=7, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, type_name=".tbtest.Summary.Value",
                      label=F.LABEL_REPEATED)

    event = proto.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, type_name=".tbtest.Summary",
                    label=F.LABEL_OPTIONAL)

    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    descriptor = pool.FindMessageTypeByName("tbtest.Event")
    if hasattr(message_factory, "GetMessageClass"):  # protobuf 4.22 and later (PyPI's); GetPrototype is gone
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # Debian's 4.21


Event = _event_class()


def read_events(path):
    """The Event messages of a file, in order."""
    events = []
    for record in read_records(path):
        event = Event()
        event.ParseFromString(record)
        events.append(event)
    return events


def scalars(path):
    """{tag: [(step, wall_time, value), ...]} of a file's scalar summaries."""
    result = {}
    for event in read_events(path):
        for value in event.summary.value:
            result.setdefault(value.tag, []).append((event.step, event.wall_time, value.simple_value))
    return result
