// The QEMU command line of one guest: what libvirt makes of a VMI's domain in virt-launcher, kept to
// what Lab Console's VMs use. -S starts it with its CPUs stopped, so that the emulator has attached to
// the serial line before the first byte of the boot log is written.
import { accessSync, constants, readFileSync } from "node:fs";
import { join } from "node:path";
import type { GuestImageFiles } from "./image.ts";

export interface QemuMachine {
  name: string;
  vcpus: number;
  memoryBytes: number;
  /** The guest's folder: overlay, seed and the sockets. */
  dir: string;
  image: GuestImageFiles;
  accel: "kvm" | "tcg";
  /** The VMI asks for a USB tablet (devices.inputs): libvirt gives it an xHCI controller to sit on. */
  usbTablet: boolean;
}

/** The sockets QEMU serves in the guest's folder (short names: a unix socket path has 108 bytes). */
export const sockets = {
  qmp: "qmp.sock",
  serial: "serial.sock",
  agent: "agent.sock",
  vnc: "vnc.sock",
} as const;

export function qemuArgs(machine: QemuMachine): string[] {
  const at = (file: string) => join(machine.dir, file);
  const mib = Math.max(128, Math.floor(machine.memoryBytes / (1024 * 1024)));
  return [
    "-name",
    `guest=${machine.name},debug-threads=on`,
    "-nodefaults",
    "-no-user-config",
    "-machine",
    "q35",
    "-accel",
    // TCG's translation cache defaults to 1 GiB, which a guest's RSS shows in full after a while.
    machine.accel === "kvm" ? "kvm" : "tcg,thread=multi,tb-size=256",
    "-cpu",
    machine.accel === "kvm" ? "host" : "max",
    "-smp",
    String(machine.vcpus),
    "-m",
    `${mib}M`,
    "-kernel",
    machine.image.kernel,
    "-initrd",
    machine.image.initrd,
    "-append",
    "console=ttyS0",
    "-drive",
    `file=${at("root.qcow2")},if=virtio,format=qcow2,discard=unmap`,
    "-drive",
    `file=${at("seed.iso")},if=virtio,format=raw,readonly=on`,
    // User networking: the guest has its own stack and address (10.0.2.15) behind QEMU, and reaches
    // out as the host; port-forward reaches in through forwards added as they are needed.
    "-netdev",
    `user,id=net0,hostname=${machine.name}`,
    "-device",
    "virtio-net-pci,netdev=net0",
    "-chardev",
    `socket,id=serial0,path=${at(sockets.serial)},server=on,wait=off`,
    "-serial",
    "chardev:serial0",
    "-chardev",
    `socket,id=agent0,path=${at(sockets.agent)},server=on,wait=off`,
    "-device",
    "virtio-serial-pci",
    "-device",
    "virtserialport,chardev=agent0,name=org.qemu.guest_agent.0",
    // Kept for the graphical console: KubeVirt's vnc subresource relays the same kind of socket.
    "-device",
    "VGA",
    ...(machine.usbTablet ? ["-device", "qemu-xhci,id=usb", "-device", "usb-tablet,bus=usb.0"] : []),
    "-vnc",
    `unix:${at(sockets.vnc)}`,
    "-display",
    "none",
    "-qmp",
    `unix:${at(sockets.qmp)},server=on,wait=off`,
    "-S",
  ];
}

/**
 * KVM where it really works: /dev/kvm must be usable and the CPU must offer virtualization (vmx or
 * svm). A nested VM may show /dev/kvm without the latter, and there KVM guests hang without a word.
 */
export function accelerator(): "kvm" | "tcg" {
  try {
    accessSync("/dev/kvm", constants.R_OK | constants.W_OK);
    return /^flags\s*:.*\b(vmx|svm)\b/m.test(readFileSync("/proc/cpuinfo", "utf8")) ? "kvm" : "tcg";
  } catch {
    return "tcg";
  }
}
