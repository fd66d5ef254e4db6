export { FlagstaffInProcessProvider, type FlagstaffInProcessProviderOptions } from "./in-process.js";
export { FlagstaffProvider, type FlagstaffProviderOptions } from "./provider.js";
