/**
 * The report's limits, apart from its schema so that the agent (bundled for devices) knows them without
 * the schema library.
 */
export const MAX_RESOURCES_PER_REPORT = 256;
