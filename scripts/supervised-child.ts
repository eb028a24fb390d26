// Preloaded (--import) into every process npm start supervises. The supervisor holds the other end of this process's
// IPC channel: when it goes away, SIGKILLed included, the channel closes, and the process drains and exits as on
// SIGTERM instead of keeping its port.
process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
// A 'disconnect' listener makes Node wait on the channel; the guard must not keep a process alive that is done.
process.nextTick(() => process.channel?.unref());
