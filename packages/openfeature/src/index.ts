export { FlagstaffProvider, type FlagstaffProviderOptions } from "./provider.js";
